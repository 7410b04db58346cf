"""Checks one HTML report as a browser rendered it (used by browser_test.sh).

usage: check_page.py KIND DOM_FILE PNG_FILE SOURCE_HTML [EXPECTED...]
  KIND: inspect or replay (which charts must be present)
  DOM_FILE: chromium --dump-dom output; PNG_FILE: chromium --screenshot
  EXPECTED: name=min pairs: "selector" counts that must reach min, where a
            selector is tag.class or #id.
Prints what it found and exits 1 on the first failed check.
"""
import html.parser
import re
import sys

from PIL import Image


class Dom(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags = {}        # tag -> count
        self.classes = {}     # (tag, class) -> count
        self.ids = set()
        self.handlers = []    # on* attributes
        self.external = []    # attributes that name something outside
        self.text = []
        self.title = None
        self.style = ""       # the text of <style> elements
        self.attr_values = []
        self._in_head_title = False
        self._in_style = False
        self._in_svg = 0

    def handle_starttag(self, tag, attrs):
        self.tags[tag] = self.tags.get(tag, 0) + 1
        if tag == "svg":
            self._in_svg += 1
        if tag == "style":
            self._in_style = True
        if tag == "title" and not self._in_svg and self.title is None:
            self._in_head_title = True
            self.title = ""
        for name, value in attrs:
            value = value or ""
            self.attr_values.append((tag, name, value))
            if name.startswith("on"):
                self.handlers.append((tag, name, value))
            if name in ("src", "srcset", "data", "poster", "action", "formaction", "background"):
                self.external.append((tag, name, value))
            if name in ("href", "xlink:href") and not value.startswith("#"):
                self.external.append((tag, name, value))
            if name == "class":
                for c in value.split():
                    self.classes[(tag, c)] = self.classes.get((tag, c), 0) + 1
            if name == "id":
                self.ids.add(value)

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag == "svg":
            self._in_svg -= 1

    def handle_endtag(self, tag):
        if tag == "svg":
            self._in_svg -= 1
        if tag == "title":
            self._in_head_title = False
        if tag == "style":
            self._in_style = False

    def handle_data(self, data):
        if self._in_style:
            self.style += data
            return
        self.text.append(data)
        if self._in_head_title:
            self.title += data


class Figures(html.parser.HTMLParser):
    """The page's charts, each a list of its elements (tag, attrs, text),
    the text of each verdict box and the policy names of each table."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.figures = []   # {"id", "class", "elements": [[tag, attrs, text]]}
        self.verdicts = []  # (id, text)
        self.tables = {}    # id -> names in the "policy" column
        self._figure = None
        self._text_el = None
        self._verdict = None  # [id, text, div depth]
        self._details = 0     # inside <details> or <code> (the rule, the adopt line)
        self._div_depth = 0
        self._table = None
        self._col = -1
        self._policy_col = None
        self._cell = None

    def handle_starttag(self, tag, attrs):
        a = dict((k, v or "") for k, v in attrs)
        if tag == "figure":
            self._figure = {"id": a.get("id", ""), "class": a.get("class", ""), "elements": []}
            self.figures.append(self._figure)
        elif self._figure is not None:
            el = [tag, a, ""]
            self._figure["elements"].append(el)
            if tag == "text":
                self._text_el = el
        if tag in ("details", "code"):
            self._details += 1
        if tag == "div":
            self._div_depth += 1
            if "verdict" in a.get("class", "").split():
                self._verdict = [a.get("id", ""), "", self._div_depth]
        if tag == "table":
            self._table = a.get("id", "")
            self.tables[self._table] = []
            self._policy_col = None
        if self._table is not None and tag == "tr":
            self._col = -1
        if self._table is not None and tag in ("td", "th"):
            self._col += 1
            self._cell = [tag, ""]

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag == "text":
            self._text_el = None

    def handle_endtag(self, tag):
        if tag == "figure":
            self._figure = None
        if tag in ("details", "code"):
            self._details -= 1
        if tag == "text":
            self._text_el = None
        if tag == "div":
            if self._verdict is not None and self._verdict[2] == self._div_depth:
                self.verdicts.append((self._verdict[0], self._verdict[1]))
                self._verdict = None
            self._div_depth -= 1
        if tag in ("td", "th") and self._cell is not None:
            kind, text = self._cell
            if kind == "th" and text.strip() == "policy":
                self._policy_col = self._col
            if kind == "td" and self._col == self._policy_col:
                self.tables[self._table].append(text.strip())
            self._cell = None
        if tag == "table":
            self._table = None

    def handle_data(self, data):
        if self._text_el is not None:
            self._text_el[2] += data
        if self._verdict is not None and not self._details:
            self._verdict[1] += data
        if self._cell is not None:
            self._cell[1] += data


def elements(fig, tag, cls=None):
    return [e for e in fig["elements"]
            if e[0] == tag and (cls is None or cls in e[1].get("class", "").split())]


def num(attrs, name):
    return float(attrs.get(name, "0"))


# As the charts estimate them (charts/svg.cc): a point's tag is 10px
# DejaVu Sans digits, 6.4px each, in an 11px-high box.
TAG_DIGIT_PX, TAG_H = 6.4, 11


def check_charts(figs):
    """Every line chart's legend names exactly its lines; every scatter
    point has a tag, none overlapping another tag or a point, and a key
    entry, and no point sits on an axis line; every off-scale mark has its
    value written."""
    lines = scatters = 0
    for fig in figs.figures:
        fid = fig["id"]
        if "chart-line" in fig["class"]:
            lines += 1
            series = len(elements(fig, "path", "series"))
            entries = len(elements(fig, "text", "legend-entry"))
            if series > 1 and entries != series:
                fail(f"#{fid}: {series} lines drawn, {entries} legend entries")
            if series == 1 and entries not in (0, 1):
                fail(f"#{fid}: one line, {entries} legend entries")
        if "chart-scatter" in fig["class"]:
            scatters += 1
            dots = elements(fig, "circle", "dot")
            tags = elements(fig, "text", "point-label")
            keys = elements(fig, "text", "point-key")
            if not dots:
                fail(f"#{fid}: a scatter with no point")
            if len(tags) != len(dots) or len(keys) != len(dots):
                fail(f"#{fid}: {len(dots)} points, {len(tags)} tags, {len(keys)} key entries")
            if sorted(t[2] for t in tags) != sorted(k[2] for k in keys):
                fail(f"#{fid}: the tags by the points are not the key's")
            boxes = []
            for t in tags:
                x, y = num(t[1], "x"), num(t[1], "y")
                # Shrunk by half a pixel: the estimate, not the glyphs.
                boxes.append((x - 0.5, y + 2 - TAG_H + 0.5,
                              x - 1 + len(t[2]) * TAG_DIGIT_PX + 1.5, y + 1.5, t[2]))
            for i, a in enumerate(boxes):
                for b in boxes[:i]:
                    if a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]:
                        fail(f"#{fid}: tags {a[4]} and {b[4]} overlap")
                for d in dots:
                    cx, cy, r = num(d[1], "cx"), num(d[1], "cy"), num(d[1], "r")
                    nx, ny = min(max(cx, a[0]), a[2]), min(max(cy, a[1]), a[3])
                    if (nx - cx) ** 2 + (ny - cy) ** 2 < (r - 0.5) ** 2:
                        fail(f"#{fid}: tag {a[4]} covers a point at ({cx}, {cy})")
            for ax in elements(fig, "line", "axis"):
                x1, x2, y1, y2 = (num(ax[1], k) for k in ("x1", "x2", "y1", "y2"))
                for d in dots:
                    cx, cy, r = num(d[1], "cx"), num(d[1], "cy"), num(d[1], "r")
                    if x1 == x2 and cx - r <= x1:
                        fail(f"#{fid}: a point at x={cx} is on or left of the y axis (x={x1})")
                    if y1 == y2 and cy + r >= y1:
                        fail(f"#{fid}: a point at y={cy} is on or under the x axis (y={y1})")
        off = len(elements(fig, "circle", "offscale"))
        if "chart-interval" in fig["class"] and off:
            written = len(elements(fig, "text", "offscale-value"))
            if written == 0:
                fail(f"#{fid}: {off} marks off the scale, no value written")
        if "-effects-" in fid and "chart-interval" in fig["class"]:
            rows = len(elements(fig, "text", "row-label"))
            if rows < 2:
                fail(f"#{fid}: an effects panel with {rows} row(s)")
    print(f"  charts: {lines} line charts' legends match their lines; {scatters} scatter(s): "
          "every point tagged and keyed, no overlap, none on an axis")


def check_verdicts(figs):
    """Each verdict says each thing once: every policy it names, once (the
    folded rule and the adopt line's code aside: they name kinds and types)."""
    if not figs.verdicts:
        fail("no verdict box")
    for vid, text in figs.verdicts:
        trace = vid[: -len("-verdict")]
        names = figs.tables.get(trace + "-table", [])
        if not names:
            fail(f"#{vid}: no table of policies to check it against")
        for word in ("Recommended", "Adopt", "Fastest"):
            if text.count(word) > 1:
                fail(f"#{vid}: {word!r} {text.count(word)} times: {text[:300]!r}")
        # A speed figure belongs to the line of the policy it is of: at most
        # one on the recommended line and one on the fastest (when that is
        # another policy).
        lines = text.count("Recommended") + text.count("Fastest")
        if text.count("the speed of glibc malloc") > max(1, lines):
            fail(f"#{vid}: 'the speed of glibc malloc' {text.count('the speed of glibc malloc')} "
                 f"times for {lines} policy lines: {text[:300]!r}")
        text = text.replace("glibc malloc", "glibc")  # the yardstick, not the policy
        for name in names:
            pattern = r"(?<![\w/])" + re.escape(name) + r"(?![\w/])"
            n = len(re.findall(pattern, text))
            if n > 1:
                fail(f"#{vid}: {name!r} named {n} times: {text[:300]!r}")
        print(f"  #{vid}: each of {len(names)} policies named at most once")


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def check_markup(dom, where):
    for tag in ("script", "img", "iframe", "object", "embed", "link", "base", "form"):
        if dom.tags.get(tag, 0):
            fail(f"{where}: {dom.tags[tag]} <{tag}> element(s)")
    if dom.handlers:
        fail(f"{where}: event handler attributes: {dom.handlers[:3]}")
    if dom.external:
        fail(f"{where}: references {dom.external[:3]}")


def count(dom, selector):
    if selector.startswith("#"):
        return 1 if selector[1:] in dom.ids else 0
    tag, _, cls = selector.partition(".")
    if not cls:
        return dom.tags.get(tag, 0)
    return dom.classes.get((tag, cls), 0)


def main():
    kind, dom_file, png_file, source = sys.argv[1:5]
    expected = [e.rsplit("=", 1) for e in sys.argv[5:]]
    src = open(source, encoding="utf-8").read()
    dom_html = open(dom_file, encoding="utf-8").read()
    if len(dom_html) < 1000 or "<svg" not in dom_html:
        fail(f"{dom_file}: the browser produced no page ({len(dom_html)} bytes)")

    # 1. The file references nothing outside itself: no element that loads
    # or runs anything, no attribute or style naming a URL. (Text may say
    # anything: it is shown, not followed.)
    dom_src = Dom()
    dom_src.feed(src)
    check_markup(dom_src, source)
    for tag, name, value in dom_src.attr_values:
        if re.search(r"https?:|url\(|javascript:|data:", value, re.I) and name != "content":
            fail(f"{source}: <{tag} {name}={value!r}> names something outside the file")
    if re.search(r"url\(|@import|https?:", dom_src.style, re.I):
        fail(f"{source}: its CSS loads something: {dom_src.style[:80]!r}")
    if "Content-Security-Policy" not in src or "default-src 'none'" not in src:
        fail(f"{source}: no Content-Security-Policy forbidding external content")

    # 2. As rendered: no script, no handler, no external reference.
    dom = Dom()
    dom.feed(dom_html)
    check_markup(dom, dom_file)
    if dom.title is None or "PWNED" in dom.title:
        fail(f"the page title is {dom.title!r}")

    # 3. The expected charts and marks.
    for selector, minimum in expected:
        n = count(dom, selector)
        print(f"  {selector}: {n} (at least {minimum})")
        if n < int(minimum):
            fail(f"{selector}: {n} found, expected at least {minimum}")

    # 4. The charts read: legends, tags, scales; the verdict said once.
    figs = Figures()
    figs.feed(dom_html)
    check_charts(figs)
    if kind == "replay":
        check_verdicts(figs)

    # 5. Hostile strings, if any, are shown as text.
    text = "".join(dom.text)
    if "hostile" in source:
        for s in ("<script>alert(1)</script>", "\"><img src=x onerror=alert(1)>",
                  "</title><script>document.title='PWNED'</script>"):
            if s not in text:
                fail(f"the hostile string {s!r} is not shown as text")
        print("  hostile strings: shown as text, none became an element")

    # 6. The screenshot is not blank: many colours, the palette's blue or
    # black marks, a fair share of non-white pixels.
    im = Image.open(png_file).convert("RGB")
    w, h = im.size
    small = im.resize((w // 2, h // 2), Image.NEAREST)
    colours = small.getcolors(maxcolors=1 << 20) or []
    non_white = sum(n for n, c in colours if c != (255, 255, 255))
    share = non_white / float((w // 2) * (h // 2))
    print(f"  screenshot {w}x{h}: {len(colours)} colours, {share:.1%} non-white")
    if len(colours) < 16:
        fail(f"{png_file}: only {len(colours)} colours: blank or unstyled")
    if share < 0.02:
        fail(f"{png_file}: {share:.2%} of the pixels are not white: nothing drawn")
    marks = sum(n for n, c in colours if c in ((0, 114, 178), (0, 0, 0), (0, 158, 115)))
    if marks == 0:
        fail(f"{png_file}: no pixel of the palette's blue, green or black: no marks drawn")
    print(f"OK {kind}: {source}")


if __name__ == "__main__":
    main()
