"""The course as a learner meets it: every notebook run in JupyterLab, in a real browser.

    make browser-test                      # all notebooks (installs Playwright into .venv first)
    python tools/browser_test.py 03 05   # some of them, by number

nbval compares the text of stored outputs; it neither renders widgets nor runs JupyterLab.
This script starts JupyterLab from the running Python (the project's ``.venv``) on a free
loopback port with a random token, drives headless Chromium through Playwright, and for each
notebook ``notebooks/NN_*.ipynb``:

* opens it in a workspace of its own, waits for its kernel, runs *Run All Cells*
  (``notebook:run-all-cells``, what the Run menu calls) and waits until every code cell has run
  and the kernel is idle, recording the wall time;
* fails on any error output, except in a cell tagged ``raises-exception`` (or marked
  ``# NBVAL_RAISES_EXCEPTION``), on a code cell left unrun, and on "Error displaying widget";
* finds the ipywidgets explorers (slider widgets in the outputs), moves each slider three steps
  with the keyboard, and fails unless the explorer's output text changes;
* saves a screenshot of the notebook (and one of each explorer) to ``--out`` (``runs/browser/``,
  not committed), with ``results.json``.

The server serves a temporary mirror of the repository (the notebooks copied, everything else
linked), with autosave off, so the notebooks in ``notebooks/`` are never written.  The kernels
import this checkout's ``dca_course`` (``PYTHONPATH``).  On the way out, also after a failure,
the script shuts each kernel down, then stops the server and any kernel still running by their
process ids.  Chromium: ``--chromium PATH`` or ``$CHROMIUM``, else a system ``chromium``
(Debian: ``apt-get install chromium``), else Playwright's own (``python -m playwright install
chromium``, which needs the network).
"""
from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
WIDGET_ERROR = "Error displaying widget"

#: JupyterLab settings for the run: never save, render every cell (so that the page holds every
#: output and widget), no news or update pop-ups over the screenshots.
LAB_SETTINGS = {
    "@jupyterlab/docmanager-extension/plugin.jupyterlab-settings": {"autosave": False},
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false",
                                                                         "checkForUpdates": False},
}

# -- JavaScript run in the page (window.jupyterapp exists with --LabApp.expose_app_in_browser) --
JS_NOTEBOOK_READY = """() => {
  const app = window.jupyterapp, w = app && app.shell.currentWidget;
  const kernel = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
  return !!(w && w.content && w.content.model && w.context.isReady && kernel &&
            kernel.connectionStatus === 'connected' && kernel.status === 'idle');
}"""
JS_START_RUN_ALL = """async () => {
  const app = window.jupyterapp, w = app.shell.currentWidget;
  const kernel = w.sessionContext.session.kernel;
  // Every execute request sent and its reply.  Neither Run All's promise (it settles at the first
  // error reply, a cell tagged raises-exception included, while the kernel goes on with the cells
  // queued after it) nor the kernel's status (ipykernel may report idle while a cell that shows
  // widgets is still running) says when the last cell has finished; the replies do.
  const bt = window.__bt = {done: null, sent: 0, pending: new Set(), lastReply: performance.now()};
  kernel.anyMessage.connect((_, {msg, direction}) => {
    if (direction === 'send' && msg.header.msg_type === 'execute_request') {
      bt.sent += 1;
      bt.pending.add(msg.header.msg_id);
    } else if (direction === 'recv' && msg.header.msg_type === 'execute_reply') {
      bt.pending.delete(msg.parent_header.msg_id);
      bt.lastReply = performance.now();
    }
  });
  // clear the saved outputs and execution counts first, so that a cell left unrun shows as such
  await app.commands.execute('notebook:clear-all-cell-outputs');
  app.commands.execute('notebook:run-all-cells').then(
    ok => { bt.done = {ok: ok === undefined ? true : !!ok}; },
    err => { bt.done = {ok: false, error: String(err)}; });
  return true;
}"""
#: Finished: Run All has settled, every execute request it sent has its reply (an aborted cell
#: gets one too), and no reply came for a second.
JS_RUN_FINISHED = """() => {
  const bt = window.__bt;
  return !!(bt.done && bt.sent > 0 && bt.pending.size === 0 && performance.now() - bt.lastReply > 1000);
}"""
JS_CELLS = """() => {
  const w = window.jupyterapp.shell.currentWidget, cells = w.content.model.cells, out = [];
  for (let i = 0; i < cells.length; i++) {
    const j = cells.get(i).toJSON();
    if (j.cell_type !== 'code') continue;
    const src = Array.isArray(j.source) ? j.source.join('') : j.source;
    out.push({index: i, source: src, tags: (j.metadata && j.metadata.tags) || [],
              execution_count: j.execution_count,
              outputs: (j.outputs || []).map(o => ({type: o.output_type, ename: o.ename || null,
                                                    evalue: o.evalue ? String(o.evalue).slice(0, 300) : null,
                                                    mimes: Object.keys(o.data || {})}))});
  }
  return {cells: out, kernel: w.sessionContext.session.kernel.name, done: window.__bt.done, sent: window.__bt.sent,
          text: w.content.node.textContent, widgets: w.content.node.querySelectorAll('.jupyter-widgets').length};
}"""


# -- the server ---------------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def mirror_repository(site: Path) -> None:
    """``site`` as the repository seen from a notebook: the notebooks copied (so that nothing
    the browser does can write them), every other top-level entry linked."""
    site.mkdir(parents=True)
    shutil.copytree(NOTEBOOKS, site / "notebooks", ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    for entry in ROOT.iterdir():
        if entry.name not in ("notebooks", ".git", ".venv", "runs"):
            (site / entry.name).symlink_to(entry)


def write_lab_settings(folder: Path) -> None:
    for name, values in LAB_SETTINGS.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values), encoding="utf-8")


class LabServer:
    """JupyterLab on 127.0.0.1:PORT with a random token, serving ``site``; its own config,
    runtime, settings and workspace folders under ``home``."""

    def __init__(self, site: Path, home: Path, log_path: Path):
        self.port, self.token = free_port(), secrets.token_hex(24)
        self.base = f"http://127.0.0.1:{self.port}"
        write_lab_settings(home / "settings")
        env = dict(os.environ, JUPYTER_CONFIG_DIR=str(home / "config"), JUPYTER_RUNTIME_DIR=str(home / "runtime"),
                   JUPYTERLAB_SETTINGS_DIR=str(home / "settings"),
                   JUPYTERLAB_WORKSPACES_DIR=str(home / "workspaces"),
                   PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
        cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", f"--ServerApp.root_dir={site}",
               "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={self.port}", "--ServerApp.port_retries=0",
               f"--IdentityProvider.token={self.token}", "--LabApp.expose_app_in_browser=True"]
        if hasattr(os, "getuid") and os.getuid() == 0:
            cmd.append("--allow-root")          # containers often run as root
        self.log = open(log_path, "w", encoding="utf-8")
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT, env=env, cwd=site)
        self.kernel_pids: set[int] = set()

    def api(self, method: str, path: str):
        req = urllib.request.Request(self.base + path, method=method,
                                     headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(req, timeout=30) as resp:
            body = resp.read()
        return json.loads(body) if body else None

    def wait_ready(self, timeout: float = 180) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"JupyterLab exited with status {self.proc.returncode}; see {self.log.name}")
            try:
                self.api("GET", "/api/status")
                return
            except OSError:
                time.sleep(0.5)
        raise RuntimeError(f"JupyterLab did not answer within {timeout:.0f} s; see {self.log.name}")

    def children(self) -> set[int]:
        """Process ids of the server's descendants (its kernels)."""
        return set(_descendants(self.proc.pid))

    def shutdown_kernels(self) -> None:
        """Each session's kernel asked to shut down, then any kernel process left stopped by id."""
        pids = self.children()
        self.kernel_pids |= pids
        try:
            for session in self.api("GET", "/api/sessions") or []:
                self.api("DELETE", f"/api/sessions/{session['id']}")
        except OSError:
            pass
        _stop_pids(pids, grace=10)

    def stop(self) -> None:
        """The server and every process it started, by their ids: SIGTERM, then SIGKILL."""
        if self.proc.poll() is None:
            pids = self.children()
            self.kernel_pids |= pids
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
            _stop_pids(pids, grace=5)
        self.log.close()


def _descendants(pid: int) -> list[int]:
    try:
        import psutil

        return [p.pid for p in psutil.Process(pid).children(recursive=True)]
    except ImportError:
        pass
    except Exception:      # the process is gone
        return []
    parents: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        fields = text[text.rindex(")") + 2:].split()
        parents.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = [], [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:        # a zombie (exited, not yet reaped by its parent) counts as gone
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except (OSError, IndexError):
        return True


def _stop_pids(pids, grace: float) -> None:
    deadline = time.monotonic() + grace
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.2)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        left = [p for p in pids if _alive(p)]
        for pid in left:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        end = time.monotonic() + 5
        while any(_alive(p) for p in left) and time.monotonic() < end:
            time.sleep(0.2)


# -- the browser --------------------------------------------------------------------------------
def find_chromium(given: str | None) -> str | None:
    """A system Chromium (or Chrome), or None to use Playwright's own browser."""
    for candidate in (given, os.environ.get("CHROMIUM")):
        if candidate:
            if not (shutil.which(candidate) or Path(candidate).is_file()):
                sys.exit(f"browser_test: no browser at {candidate}")
            return shutil.which(candidate) or candidate
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        if shutil.which(name):
            return shutil.which(name)
    return None


def launch_browser(playwright, executable: str | None):
    args = ["--no-sandbox"] if hasattr(os, "getuid") and os.getuid() == 0 else []
    if executable:
        return playwright.chromium.launch(executable_path=executable, headless=True, args=args), executable
    try:
        browser = playwright.chromium.launch(headless=True, args=args)
    except Exception:
        print("browser_test: no system Chromium; installing Playwright's (needs the network)", flush=True)
        if subprocess.run([sys.executable, "-m", "playwright", "install", "chromium"]).returncode != 0:
            sys.exit("browser_test: no Chromium: install one (Debian: apt-get install chromium) or let "
                     "`python -m playwright install chromium` reach the network")
        browser = playwright.chromium.launch(headless=True, args=args)
    return browser, "playwright's chromium"


# -- one notebook -------------------------------------------------------------------------------
def deliberate_exception(cell: dict) -> bool:
    return "raises-exception" in cell["tags"] or "NBVAL_RAISES_EXCEPTION" in cell["source"]


def check_cells(state: dict) -> tuple[list[str], list[int]]:
    """(problems, indices of the cells that raised on purpose)."""
    problems, deliberate, unrun = [], [], []
    for cell in state["cells"]:
        errors = [o for o in cell["outputs"] if o["type"] == "error"]
        if deliberate_exception(cell):
            deliberate.append(cell["index"])
            if not errors:
                problems.append(f"cell {cell['index']} is marked to raise an exception but did not")
            continue
        for err in errors:
            problems.append(f"cell {cell['index']}: {err['ename']}: {err['evalue']}")
        if cell["execution_count"] is None and cell["source"].strip():
            unrun.append(cell["index"])
    if unrun:
        problems.append(f"{len(unrun)} code cell(s) did not run: {', '.join(map(str, unrun))}")
    if WIDGET_ERROR in state["text"]:
        problems.append(f"'{WIDGET_ERROR}' in the page")
    return problems, deliberate


def explorer_text(area) -> str:
    """What an explorer shows: the text of its output widgets (not its own controls)."""
    return area.evaluate("""node => {
      const outs = node.querySelectorAll('.widget-output');
      if (outs.length) return Array.from(outs).map(o => o.innerText).join('\\n');
      const copy = node.cloneNode(true);
      copy.querySelectorAll('.widget-readout, .widget-label').forEach(n => n.remove());
      return copy.innerText;
    }""").strip()


def exercise_explorers(page, stem: str, out: Path, timeout: float) -> list[dict]:
    """Move every slider in the outputs three steps right; each explorer's text must change."""
    areas = page.locator(".jp-Notebook .jp-OutputArea-output:has(.widget-slider)")
    results = []
    for k in range(areas.count()):
        area = areas.nth(k)
        slider = area.locator(".widget-slider").first
        area.scroll_into_view_if_needed()
        readout = slider.locator(".widget-readout")
        value_before = readout.inner_text().strip() if readout.count() else "?"
        before = explorer_text(area)
        handle = slider.locator(".noUi-handle").first
        handle.focus()
        for _ in range(3):
            handle.press("ArrowRight")
        after, deadline = before, time.monotonic() + timeout
        while after == before and time.monotonic() < deadline:
            page.wait_for_timeout(250)
            after = explorer_text(area)
        if after != before:                   # let a figure that follows the text arrive: wait
            html, still = area.inner_html(), 0  # until the output has not changed for 1.5 s
            for _ in range(120):
                page.wait_for_timeout(250)
                now = area.inner_html()
                still = still + 1 if now == html else 0
                html = now
                if still >= 6:
                    break
            after = explorer_text(area)
        value_after = readout.inner_text().strip() if readout.count() else "?"
        label = slider.locator(".widget-label").first
        shot = out / f"{stem}_explorer{k + 1}.png"
        area.screenshot(path=str(shot))
        results.append({"control": label.inner_text().strip() if label.count() else "slider",
                        "value": [value_before, value_after], "responded": after != before,
                        "before": before.splitlines()[:2], "after": after.splitlines()[:2],
                        "screenshot": str(shot.relative_to(ROOT) if shot.is_relative_to(ROOT) else shot)})
    return results


def expected_explorers(path: Path) -> int:
    """Code cells of the saved notebook that build a slider widget (what the page must show)."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    return sum(1 for c in nb["cells"] if c["cell_type"] == "code" and "Slider(" in "".join(c["source"]))


def run_notebook(context, server: LabServer, path: Path, out: Path, timeout: float) -> dict:
    stem = path.stem
    page = context.new_page()
    record: dict = {"notebook": path.name}
    try:
        started = time.perf_counter()
        page.goto(f"{server.base}/lab/workspaces/bt-{stem}/tree/notebooks/{path.name}?token={server.token}")
        page.wait_for_function(JS_NOTEBOOK_READY, timeout=180_000, polling=500)
        record["open_s"] = round(time.perf_counter() - started, 1)
        started = time.perf_counter()
        page.evaluate(JS_START_RUN_ALL)
        page.wait_for_function(JS_RUN_FINISHED, timeout=timeout * 1000, polling=500)
        record["run_all_s"] = round(time.perf_counter() - started, 1)
        page.wait_for_timeout(1000)           # the last outputs and widget views render
        state = page.evaluate(JS_CELLS)
        problems, deliberate = check_cells(state)
        record.update(kernel=state["kernel"], code_cells=len(state["cells"]), widget_views=state["widgets"],
                      deliberate_exceptions=deliberate)
        explorers = exercise_explorers(page, stem, out, timeout=120)
        wanted = expected_explorers(path)
        if len(explorers) < wanted:
            problems.append(f"{wanted} explorer(s) built in the notebook, {len(explorers)} rendered")
        problems += [f"explorer {e['control']!r} did not respond" for e in explorers if not e["responded"]]
        if WIDGET_ERROR in page.locator(".jp-Notebook").first.inner_text():
            problems.append(f"'{WIDGET_ERROR}' after moving the explorers")
        record.update(explorers=explorers, problems=problems)
    except Exception as exc:       # a timeout or a page that never loaded: reported, the run goes on
        record.setdefault("problems", []).append(f"{type(exc).__name__}: {str(exc).splitlines()[0]}")
    finally:
        shot = out / f"{stem}.png"
        try:
            page.screenshot(path=str(shot))
            record["screenshot"] = str(shot.relative_to(ROOT) if shot.is_relative_to(ROOT) else shot)
        except Exception:
            pass
        server.shutdown_kernels()
        page.close()
    record["ok"] = not record["problems"]
    return record


# -- main ---------------------------------------------------------------------------------------
def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="*", help="notebook numbers (default: every notebooks/NN_*.ipynb)")
    parser.add_argument("--out", type=Path, default=ROOT / "runs" / "browser", help="screenshots and results.json")
    parser.add_argument("--chromium", default=None, help="the browser to drive (default: a system chromium)")
    parser.add_argument("--timeout", type=float, default=900, help="seconds Run All may take, per notebook")
    args = parser.parse_args(argv)
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        sys.exit("browser_test: Playwright is not installed here; `make browser-test` installs it into .venv")
    paths = sorted(NOTEBOOKS.glob("[0-9][0-9]*_*.ipynb"))
    if args.notebooks:
        paths = [p for p in paths if p.name[:2] in {n.zfill(2) for n in args.notebooks}]
    if not paths:
        sys.exit(f"browser_test: no notebooks {args.notebooks} in {NOTEBOOKS}")
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    executable = find_chromium(args.chromium)
    records: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="dca-browser-") as tmp:
        mirror_repository(Path(tmp) / "site")
        server = LabServer(Path(tmp) / "site", Path(tmp) / "home", out / "jupyterlab.log")
        try:
            server.wait_ready()
            print(f"JupyterLab on 127.0.0.1:{server.port} (pid {server.proc.pid})", flush=True)
            with sync_playwright() as p:
                browser, used = launch_browser(p, executable)
                print(f"browser: {used} {browser.version}", flush=True)
                context = browser.new_context(viewport={"width": 1400, "height": 1000})
                for path in paths:
                    record = run_notebook(context, server, path, out, args.timeout)
                    records.append(record)
                    explorers = ", ".join(f"{e['control']} {e['value'][0]}->{e['value'][1]} "
                                          f"{'changed' if e['responded'] else 'NO CHANGE'}"
                                          for e in record.get("explorers", []))
                    print(f"{path.name:<38} open {record.get('open_s', '-'):>5} s  run all "
                          f"{record.get('run_all_s', '-'):>6} s  {'ok' if record['ok'] else 'FAILED'}"
                          + (f"  explorers: {explorers}" if explorers else ""), flush=True)
                    for problem in record["problems"]:
                        print(f"    {problem}", flush=True)
                browser.close()
        finally:
            server.stop()
            left = [pid for pid in server.kernel_pids | {server.proc.pid} if _alive(pid)]
            print(f"stopped the server (pid {server.proc.pid}) and {len(server.kernel_pids)} kernel process(es)"
                  + (f"; still running: {left}" if left else ""), flush=True)
    (out / "results.json").write_text(json.dumps({"notebooks": records}, indent=1), encoding="utf-8")
    failed = [r["notebook"] for r in records if not r["ok"]]
    print(f"{len(records) - len(failed)}/{len(records)} notebooks passed; screenshots and results.json in {out}"
          + (f"; failed: {', '.join(failed)}" if failed else ""))
    return 1 if failed or len(records) < len(paths) else 0


if __name__ == "__main__":
    sys.exit(main())
