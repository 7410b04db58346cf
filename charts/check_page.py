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

    # 4. Hostile strings, if any, are shown as text.
    text = "".join(dom.text)
    if "hostile" in source:
        for s in ("<script>alert(1)</script>", "\"><img src=x onerror=alert(1)>",
                  "</title><script>document.title='PWNED'</script>"):
            if s not in text:
                fail(f"the hostile string {s!r} is not shown as text")
        print("  hostile strings: shown as text, none became an element")

    # 5. The screenshot is not blank: many colours, the palette's blue or
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
