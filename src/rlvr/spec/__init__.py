"""Training against a written spec (deliberative alignment, Guan et al. 2024, arXiv:2412.16339).

`document`: a spec as a versioned TOML file of rules, each governing a category of request.
`domain`: a synthetic request distribution whose every rule is checkable (prompts carry their
true category). `judge`: the exact rule checker used to filter generated data, as the RL
reward, and to measure compliance, over-refusal and citation. The pipeline's stages
(generate, filter, sft, rl) are in rlvr.orchestrate.spec_pipeline; docs/spec-training.md.
"""
