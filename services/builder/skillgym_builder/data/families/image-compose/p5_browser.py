"""Opens pages in one headless Chromium over its DevTools pipe and prints, per page, the text of
the element the page's probe wrote. Run confined by the image-compose verifier (p5_render.py):
``python3 p5_browser.py JOBS.json PROFILE_DIR`` with jobs ``[{"url", "token"}]``; prints one JSON
line per job, ``{"token", "text"}`` (text null when the page produced none in time).

Each page gets a browser context of its own (its own storage, cookies and renderer), disposed after
it, and runs under virtual time, as ``--virtual-time-budget`` does for a single page: timers fire
without waiting, so a page costs its drawing, not its delays. Starting Chromium once for all the
pages of a check saves a browser start (seconds) per page."""

import contextlib
import fcntl
import json
import os
import select
import subprocess
import sys
import time

CHROMIUM = ["chromium", "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
            "--no-default-browser-check", "--disable-extensions", "--disable-background-networking",
            "--remote-debugging-pipe"]
VIRTUAL_TIME_MS = 10000
PAGE_TIMEOUT_S = 30
READ_LIMIT = 64 * 1024 * 1024


class BrowserGone(Exception):
    pass


class Browser:
    """Chromium reading DevTools commands on fd 3 and answering on fd 4, NUL-separated JSON."""

    def __init__(self, profile):
        to_browser, self.commands = os.pipe()
        self.answers, from_browser = os.pipe()
        # the child's ends go to fds 3 and 4; keep them clear of those numbers until then
        child_read = fcntl.fcntl(to_browser, fcntl.F_DUPFD_CLOEXEC, 10)
        child_write = fcntl.fcntl(from_browser, fcntl.F_DUPFD_CLOEXEC, 10)
        os.close(to_browser)
        os.close(from_browser)

        def wire():
            os.dup2(child_read, 3)
            os.dup2(child_write, 4)

        self.process = subprocess.Popen(
            [*CHROMIUM, f"--user-data-dir={profile}", "about:blank"], preexec_fn=wire, close_fds=False,
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env={**os.environ, "HOME": profile})
        os.close(child_read)
        os.close(child_write)
        self.buffer = b""
        self.last_id = 0
        self.pending = []

    def _send(self, method, params, session):
        self.last_id += 1
        message = {"id": self.last_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        try:
            os.write(self.commands, json.dumps(message).encode() + b"\0")
        except OSError as exc:
            raise BrowserGone(str(exc)) from exc
        return self.last_id

    def _next(self, deadline):
        while b"\0" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            ready, _, _ = select.select([self.answers], [], [], left)
            if ready:
                chunk = os.read(self.answers, 1 << 20)
                if not chunk:
                    raise BrowserGone("Chromium closed its pipe")
                self.buffer += chunk
                if len(self.buffer) > READ_LIMIT:
                    raise BrowserGone("an answer over the size limit")
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def call(self, method, params=None, session=None, timeout=PAGE_TIMEOUT_S):
        wanted = self._send(method, params, session)
        deadline = time.monotonic() + timeout
        while True:
            message = self._next(deadline)
            if message.get("id") == wanted:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})
            if "method" in message:
                self.pending.append(message)

    def event(self, name, session, timeout=PAGE_TIMEOUT_S):
        for index, message in enumerate(self.pending):
            if message.get("method") == name and message.get("sessionId") == session:
                return self.pending.pop(index)
        deadline = time.monotonic() + timeout
        while True:
            message = self._next(deadline)
            if message.get("method") == name and message.get("sessionId") == session:
                return message
            if "method" in message:
                self.pending.append(message)

    def close(self):
        with contextlib.suppress(Exception):  # it is killed below either way
            self.call("Browser.close", timeout=5)
        self.process.kill()
        self.process.wait()


def probe_text(browser, url, token):
    """The text of element ``token`` once the page has had its virtual time; None if it has none."""
    context = browser.call("Target.createBrowserContext")["browserContextId"]
    try:
        target = browser.call("Target.createTarget", {"url": "about:blank", "browserContextId": context})["targetId"]
        session = browser.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        browser.call("Emulation.setVirtualTimePolicy", {"policy": "pause"}, session)
        browser.call("Page.navigate", {"url": url}, session)
        browser.call("Emulation.setVirtualTimePolicy",
                     {"policy": "pauseIfNetworkFetchesPending", "budget": VIRTUAL_TIME_MS}, session)
        browser.event("Emulation.virtualTimeBudgetExpired", session)
        found = browser.call("Runtime.evaluate", {
            "expression": f"(document.getElementById({json.dumps(token)}) || {{}}).textContent || null",
            "returnByValue": True}, session)
        value = found.get("result", {}).get("value")
        return value if isinstance(value, str) else None
    finally:
        browser.call("Target.disposeBrowserContext", {"browserContextId": context})


def main(jobs_path, profile):
    with open(jobs_path, encoding="utf-8") as handle:
        jobs = json.load(handle)
    browser = Browser(profile)
    try:
        for index, job in enumerate(jobs):
            try:
                text = probe_text(browser, job["url"], job["token"])
            except BrowserGone as exc:
                print(f"Chromium is gone: {exc}", file=sys.stderr)
                break
            except TimeoutError:
                # a page that does not finish in its time fails the check whatever the others do
                print(f"{job['url']}: no result in {PAGE_TIMEOUT_S} s; {len(jobs) - index - 1} openings skipped",
                      file=sys.stderr)
                break
            except RuntimeError as exc:
                print(f"{job['url']}: {exc}", file=sys.stderr)
                text = None
            print(json.dumps({"token": job["token"], "text": text}), flush=True)
    finally:
        browser.close()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
