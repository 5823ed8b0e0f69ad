"""Stock kept as a dict: name -> (count, unit price)."""


def add_item(stock, name, count=1, price=0):
    old_count, old_price = stock.get(name, (0, price))
    out = dict(stock)
    out[name] = (old_count + count, price or old_price)
    return out


def remove_item(stock, name, count=1):
    if name not in stock:
        raise KeyError(name)
    have, price = stock[name]
    if count > have:
        raise ValueError("not enough in stock")
    out = dict(stock)
    if have - count == 0:
        del out[name]
    else:
        out[name] = (have - count, price)
    return out


def total_value(stock):
    return sum(count * price for count, price in stock.values())


def low_stock(stock, threshold=2):
    """Names with fewer than `threshold` items, sorted."""
    return sorted(name for name, (count, _) in stock.items() if count < threshold)


def most_valuable(stock):
    if not stock:
        return None
    return max(stock, key=lambda name: stock[name][0] * stock[name][1])
