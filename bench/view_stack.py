"""The viewer's two library choices, measured: the chart library and the server.

Charts: each library's script as its PyPI package ships it (plotly always; bokeh when importable
or given with --bokeh-js), its size raw and gzipped, and the time in Chromium from navigation to
a 1,000 x 20 heatmap plus a 1,000-point scatter drawn (median of --repeat), under the viewer's
own Content-Security-Policy. Server: the standard library's ThreadingHTTPServer (the viewer's)
against Starlette on uvicorn (when installed), both answering the same data file from the same
read model: the stack's import time, and the median latency of --requests warm requests.

Usage: python bench/view_stack.py [--repeat 3] [--requests 300] [--bokeh-js DIR]
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

from perf_row import print_row

from benchwright.view.assets import plotly_js

CSP = ("default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
       "img-src 'self' data:")
DATA = """window.N=1000; window.M=20; const r=(s=>()=>(s=(s*16807)%2147483647)/2147483647)(7);
window.Z=[...Array(N)].map(()=>[...Array(M)].map(r)); window.X=[...Array(N)].map(r);
window.Y=[...Array(N)].map(r); window.ROWS=[...Array(N).keys()].map(i=>"run"+i);
window.COLS=[...Array(M).keys()].map(j=>"p"+j);"""
DRAW = {
    "plotly": """Plotly.newPlot('a',[{type:'heatmap',z:Z,x:COLS,y:ROWS}],{})
.then(()=>Plotly.newPlot('b',[{type:'scatter',mode:'markers',x:X,y:Y}],{}))
.then(()=>performance.mark('drawn'));""",
    "bokeh": """const P=Bokeh.Plotting, xs=[],ys=[],cs=[];
for(let i=0;i<N;i++)for(let j=0;j<M;j++){xs.push(COLS[j]);ys.push(ROWS[i]);
const v=Math.floor(Z[i][j]*255);cs.push(`rgb(${v},${v},255)`);}
const f=P.figure({x_range:COLS,y_range:ROWS,width:900,height:600});
f.rect({x:xs,y:ys,width:1,height:1,fill_color:cs,line_color:null});
const g=P.figure({width:600,height:400}); g.scatter({x:X,y:Y});
Promise.all([P.show(f,'#a'),P.show(g,'#b')]).then(()=>requestAnimationFrame(
()=>performance.mark('drawn')));""",
}


def _chart_scripts(bokeh_js: Path | None) -> dict[str, list[Path]]:
    found = {"plotly": [plotly_js()]}
    folder = bokeh_js
    spec = importlib.util.find_spec("bokeh")
    if folder is None and spec is not None and spec.origin is not None:
        folder = Path(spec.origin).parent / "server" / "static" / "js"
    if folder is not None:
        found["bokeh"] = [folder / "bokeh.min.js", folder / "bokeh-api.min.js"]
    return found


def _page(folder: Path, name: str, scripts: list[Path]) -> Path:
    for script in scripts:
        (folder / script.name).write_bytes(script.read_bytes())
    (folder / "data.js").write_text(DATA)
    (folder / f"{name}.js").write_text(DRAW[name])
    tags = "".join(f'<script src="{s.name}"></script>' for s in scripts)
    page = folder / f"{name}.html"
    page.write_text(f'<!doctype html><meta charset="utf-8"><meta http-equiv='
                    f'"Content-Security-Policy" content="{CSP}">{tags}<script src="data.js">'
                    f'</script><div id="a"></div><div id="b"></div>'
                    f'<script src="{name}.js"></script>')
    return page


def bench_charts(repeat: int, bokeh_js: Path | None) -> list[str]:
    from playwright.sync_api import sync_playwright

    print("charts: 1,000 x 20 heatmap + 1,000-point scatter, navigation to drawn, in Chromium")
    folder = Path(tempfile.mkdtemp(prefix="bw-charts-"))
    scripts = _chart_scripts(bokeh_js)
    figures = []
    with sync_playwright() as play:
        browser = play.chromium.launch(executable_path="/usr/bin/chromium", headless=True,
                                       args=["--no-sandbox", "--disable-gpu"])
        for name, files in scripts.items():
            raw = sum(f.stat().st_size for f in files)
            packed = sum(len(gzip.compress(f.read_bytes())) for f in files)
            url = _page(folder, name, files).as_uri()
            times = [_drawn(browser, url) for _ in range(repeat)]
            print(f"  {name:<7} {raw / 2**20:5.2f} MB ({packed / 2**20:4.2f} MB gzipped)  "
                  f"drawn in {statistics.median(times):.2f} s (median of {repeat})")
            figures.append(f"{name} {packed / 2**20:.2f} MB gzipped, drawn in "
                           f"{statistics.median(times):.2f} s")
        browser.close()
    return figures


def _drawn(browser: Any, url: str) -> float:
    page = browser.new_page()
    page.goto(url)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        marks = page.evaluate("performance.getEntriesByName('drawn').map(e => e.startTime)")
        if marks:
            page.close()
            return float(marks[0]) / 1000
        time.sleep(0.05)
    raise TimeoutError(url)


def _import_time(modules: str) -> float:
    code = f"import time; t = time.perf_counter(); import {modules}; print(time.perf_counter() - t)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout)


def _latency(url: str, requests: int) -> float:
    times = []
    for _ in range(requests):
        start = time.perf_counter()
        with urllib.request.urlopen(url) as answer:
            answer.read()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def bench_servers(requests: int) -> list[str]:
    from benchwright.view.read_model import ReadModel
    from benchwright.view.server import serve_in_thread, start

    folder = Path(tempfile.mkdtemp(prefix="bw-servers-"))
    sys.path.insert(0, str(Path(__file__).parent))  # the synthetic runs of view_scale.py
    from view_scale import write_run

    for i in range(200):
        write_run(folder / f"run_{i:03d}", 20, 1, 3, i, False)
    print(f"server: {requests} warm requests of the run list of 200 runs")
    stdlib = start([folder])
    stop = serve_in_thread(stdlib)
    url = stdlib.url + "data/runs.js"
    _latency(url, 3)
    latency = _latency(url, requests)
    print(f"  http.server  import {_import_time('http.server') * 1000:6.1f} ms  "
          f"latency {latency:6.2f} ms (median)")
    stop()
    figures = [f"http.server {latency:.2f} ms a request"]
    if importlib.util.find_spec("starlette") is None or importlib.util.find_spec("uvicorn") is None:
        print("  starlette + uvicorn: not installed")
        return [*figures, "starlette + uvicorn not installed"]
    return [*figures, f"starlette + uvicorn {_starlette(ReadModel([folder]), requests):.2f} ms"]


def _starlette(model: Any, requests: int) -> float:
    """The median latency of Starlette on uvicorn answering the same data, printed too."""
    import uvicorn
    from starlette.applications import Starlette
    from starlette.responses import Response
    from starlette.routing import Route

    async def data(request: Any) -> Response:
        body = model.file(request.path_params["key"])
        return Response(body, media_type="text/javascript") if body else Response(status_code=404)

    app = Starlette(routes=[Route("/data/{key:path}.js", data)])
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="error")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    port = server.servers[0].sockets[0].getsockname()[1]
    url = f"http://127.0.0.1:{port}/data/runs.js"
    _latency(url, 3)
    latency = _latency(url, requests)
    print(f"  starlette+uvicorn  import {_import_time('starlette, uvicorn') * 1000:6.1f} ms  "
          f"latency {latency:6.2f} ms (median)")
    server.should_exit = True
    thread.join()
    return latency


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--bokeh-js", type=Path)
    args = parser.parse_args()
    figures = [*bench_charts(args.repeat, args.bokeh_js), *bench_servers(args.requests)]
    print_row("view_stack.py", "the viewer's chart library (plotly) and server (http.server): "
              f"a 1,000 x 20 heatmap drawn in Chromium, median of {args.repeat}; "
              f"{args.requests} warm requests", "bokeh (when installed); Starlette on uvicorn "
              "(when installed)", "; ".join(figures), "-")


if __name__ == "__main__":
    main()
