"""browser.py — headless Chromium (Debian's chromium, which ./kv build
installs) for the tests of pages: the DOM a page has once its scripts
ran, or a screenshot of it."""

import os
import shutil
import subprocess


def chromium():
    path = shutil.which("chromium")
    if path is None:
        raise AssertionError("chromium is missing (./kv build installs it)")
    return path


def render(url, out_dir, what, budget_ms=4000):
    """Loads url for budget_ms of page time: what is "dom" (the rendered
    DOM is returned) or a PNG path to write."""
    args = [chromium(), "--headless=new", "--no-sandbox", "--disable-gpu",
            "--disable-dev-shm-usage", "--hide-scrollbars",
            "--user-data-dir=" + os.path.join(out_dir, "profile"),
            "--virtual-time-budget=%d" % budget_ms,
            "--window-size=1300,900"]
    if what == "dom":
        args.append("--dump-dom")
    else:
        args.append("--screenshot=" + what)
    p = subprocess.run(args + [url], capture_output=True, text=True,
                       timeout=90)
    assert p.returncode == 0, p.stderr[-2000:]
    return p.stdout
