"""The samples.jsonl browser of the run report: the rows as JSON in the page, filtered by a
script written into the page (reward range, flagged only, step, an episode's stop reason); no
network resource.

A row of an environment run holds its whole trajectory under `episode` (rlvr.envs.scored,
`episode_record`): it is shown turn by turn, each turn's action (the policy's text), the
observation that answered it, its step reward, tool calls and engine finish reason, under a
line with the stop reason, turn and tool-call counts, success and error. A row with `turns`
(chat messages) is shown message by message; any other row shows its completion."""

from __future__ import annotations

import json

SCRIPT = r"""
const rows = JSON.parse(document.getElementById('samples-data').textContent);
function esc(s) { const d = document.createElement('div'); d.textContent = String(s); return d.innerHTML; }
function turn(t, i) {
  const facts = ['reward ' + esc(t.reward ?? '')];
  if (t.tool_calls) facts.push(esc(t.tool_calls) + ' tool call' + (t.tool_calls === 1 ? '' : 's'));
  if (t.finish) facts.push('finish ' + esc(t.finish));
  return '<div class="turn"><b>turn ' + (i + 1) + '</b> (' + facts.join(', ') + ')'
    + '<pre class="action">' + esc(t.action ?? '') + '</pre>'
    + (t.observation ? '<pre class="observation">' + esc(t.observation) + '</pre>' : '') + '</div>';
}
function episode(e) {
  const turns = Array.isArray(e.turns) ? e.turns : [];
  const head = ['stop: ' + esc(e.stop_reason ?? '?'), turns.length + ' turns', esc(e.tool_calls ?? 0) + ' tool calls'];
  if (e.success !== undefined && e.success !== null) head.push(e.success ? 'success' : 'no success');
  if (e.error) head.push('error: ' + esc(e.error));
  return '<div class="episode"><p class="stop">' + head.join(', ') + '</p>' + turns.map(turn).join('') + '</div>';
}
function body(r) {
  if (r.episode && typeof r.episode === 'object') return episode(r.episode);
  if (Array.isArray(r.turns)) {
    return r.turns.map((t, i) => '<pre class="turn"><b>' + (i + 1) + ' ' + esc(t.role || '') + ':</b> '
      + esc(t.content || '') + '</pre>').join('');
  }
  return '<pre>' + esc(r.completion || '') + '</pre>';
}
function render() {
  const lo = parseFloat(document.getElementById('f-min').value || '-Infinity');
  const hi = parseFloat(document.getElementById('f-max').value || 'Infinity');
  const step = document.getElementById('f-step').value;
  const flagged = document.getElementById('f-flagged').checked;
  const stop = document.getElementById('f-stop').value.trim();
  const shown = rows.filter(r => r.reward >= lo && r.reward <= hi
    && (step === '' || String(r.step) === step)
    && (stop === '' || (r.episode && r.episode.stop_reason === stop))
    && (!flagged || (r.flags || []).length + (r.cot_flags || []).length > 0));
  document.getElementById('f-count').textContent = shown.length + ' of ' + rows.length + ' samples';
  document.getElementById('samples-body').innerHTML = shown.map(r => '<tr class="sample"><td>' + r.step
    + '</td><td>' + r.reward + '</td><td>' + esc([...(r.flags || []), ...(r.cot_flags || [])].join(', '))
    + '</td><td><pre>' + esc(r.prompt || '') + '</pre></td><td>' + body(r) + '</td></tr>').join('');
}
// Filters can be preset by the address: report.html#min=1&flagged=1&step=3&stop=max_turns
const preset = new URLSearchParams(location.hash.slice(1));
for (const [key, id] of [['min', 'f-min'], ['max', 'f-max'], ['step', 'f-step'], ['stop', 'f-stop']]) {
  if (preset.has(key)) document.getElementById(id).value = preset.get(key);
}
document.getElementById('f-flagged').checked = preset.get('flagged') === '1';
for (const id of ['f-min', 'f-max', 'f-step', 'f-stop', 'f-flagged']) {
  document.getElementById(id).addEventListener('input', render);
  document.getElementById(id).addEventListener('change', render);
}
render();
"""


def browser_section(samples: list[dict]) -> str:
    """The filter controls, an empty table the script fills, and the data."""
    data = json.dumps(samples).replace("</", "<\\/")  # no "</script>" inside the data
    return ("<h2>Samples</h2><p>reward from <input id='f-min' size='4'> to <input id='f-max' size='4'> "
            "step <input id='f-step' size='5'> episode stop reason <input id='f-stop' size='10'> <label><input type='checkbox' id='f-flagged'> flagged only "
            "(verdict flags or CoT monitor)</label> <span id='f-count'></span></p>"
            "<table><thead><tr><th>step</th><th>reward</th><th>flags</th><th>prompt</th><th>completion</th>"
            "</tr></thead><tbody id='samples-body'></tbody></table>"
            f"<script type='application/json' id='samples-data'>{data}</script><script>{SCRIPT}</script>")
