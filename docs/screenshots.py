"""``make docs-check``: screenshots of the built site in headless Chromium, to look at before a
documentation change is called done (not part of ``make test``).

    python docs/screenshots.py docs/_build/html docs/_build/screenshots

Takes the landing page and one guide at a desktop width (1280 px) and a phone width (390 px)
with Debian's ``chromium`` (``apt-get install chromium``), flags as this machine's closed
network needs them (no background connections).
"""
import pathlib
import shutil
import subprocess
import sys
import tempfile

PAGES = {"landing": "index.html", "guide": "process-per-request.html"}
WIDTHS = {"desktop": (1280, 1400), "phone": (390, 1600)}
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars"]


def chromium():
    """The browser's path, or an error that says how to install it."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    raise SystemExit("make docs-check needs Chromium: apt-get install chromium")


def main(site, out):
    site, out = pathlib.Path(site).resolve(), pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)
    browser = chromium()
    for label, page in PAGES.items():
        if not (site / page).is_file():
            raise SystemExit(f"{site / page} is missing: run make docs first")
        for width_label, (width, height) in WIDTHS.items():
            target = (out / f"{label}-{width_label}.png").resolve()
            with tempfile.TemporaryDirectory() as profile:
                subprocess.run([browser, *FLAGS, f"--user-data-dir={profile}",
                                f"--window-size={width},{height}", f"--screenshot={target}",
                                (site / page).as_uri()],
                               check=True, capture_output=True, timeout=120)
            print(target)


if __name__ == "__main__":
    main(*sys.argv[1:3])
