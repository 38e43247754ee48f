/// The HTML report's style sheet and script, inlined into every page (no network).
enum HTMLAssets {
    static let css = """
        :root{--fg:#1d2330;--muted:#5d6675;--bg:#fff;--panel:#f5f7fa;--line:#d9dee6;--s0:#2f6fdb;--s1:#e08a1e;
        --partial:#8e44ad;--merged:#13917a;--malformed:#d43c3c}
        @media (prefers-color-scheme:dark){:root{--fg:#e6e9ef;--muted:#9aa3b2;--bg:#15181e;--panel:#1e232b;--line:#343b47}}
        body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);background:var(--bg);max-width:1180px;margin:24px auto;padding:0 20px}
        h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 10px;border-bottom:1px solid var(--line);padding-bottom:4px}
        h2 small{font-weight:normal;color:var(--muted);font-size:14px}
        .meta{color:var(--muted);margin:0 0 12px}code,pre{font:13px/1.4 ui-monospace,"DejaVu Sans Mono",monospace}
        .warning{background:#fff4d6;color:#5a4300;border-left:4px solid #e0a800;padding:6px 10px;margin:6px 0}
        .verdict{font-size:17px;background:var(--panel);border-radius:6px;padding:12px 12px 12px 32px;margin:12px 0}
        table{border-collapse:collapse;margin:8px 0}th,td{padding:4px 10px;border-bottom:1px solid var(--line);text-align:right}
        th:first-child,table.sortable th:nth-child(-n+3),table.sortable td:nth-child(-n+3){text-align:left}table.figures th{text-align:left;font-weight:normal;color:var(--muted)}
        table.figures thead th{color:var(--fg);font-weight:600;text-align:right}table.sortable{width:100%}table.sortable th{cursor:pointer;user-select:none}
        td code{word-break:break-all}code.addr{white-space:nowrap;word-break:normal}
        .charts{display:flex;flex-wrap:wrap;gap:18px}figure{margin:0;background:var(--panel);border-radius:6px;padding:10px}
        figure.wide{overflow-x:auto}figcaption{font-weight:600}figcaption small{display:block;font-weight:normal;color:var(--muted);font-size:13px}
        svg text{font:11px system-ui,sans-serif;fill:var(--muted)}svg .tick,svg .count{text-anchor:middle}svg .ytick{text-anchor:end}
        svg .count{fill:var(--fg)}svg .rowlabel{fill:var(--fg);font-size:12px}svg .grid{stroke:var(--line);stroke-width:1}
        svg .lane{fill:var(--bg)}.s0{fill:var(--s0)}.s1{fill:var(--s1)}
        .partial{fill:var(--partial)}.merged{fill:var(--merged)}.malformed{fill:var(--malformed)}
        .legendline{color:var(--muted)}.key{display:inline-block;width:12px;height:10px;margin:0 4px 0 10px;border-radius:2px}
        .key.partial{background:var(--partial)}.key.merged{background:var(--merged)}.key.malformed{background:var(--malformed)}
        .event{border-left:4px solid var(--line);padding:2px 12px;margin:10px 0}.event.malformed,.event.gave-up{border-color:var(--malformed)}.event.partial{border-color:var(--partial)}.event.merged{border-color:var(--merged)}
        .event p{margin:2px 0}.filter{white-space:nowrap}.filter code{background:var(--panel);padding:2px 6px;border-radius:4px}
        button.copy{margin-left:6px;font-size:12px;padding:1px 8px;cursor:pointer}
        pre.hex{background:var(--panel);padding:6px 10px;border-radius:4px;overflow-x:auto;margin:6px 0}
        footer{margin:32px 0 8px;color:var(--muted);font-size:13px}
        """

    /// Copy buttons and sortable tables; then it records each chart's laid-out size on the
    /// page (`data-rendered`), which the browser test reads back.
    static let script = """
        (function () {
          document.querySelectorAll("button.copy").forEach(function (b) {
            b.addEventListener("click", function () {
              if (navigator.clipboard) navigator.clipboard.writeText(b.dataset.copy);
              b.textContent = "copied";
              setTimeout(function () { b.textContent = "copy"; }, 1200);
            });
          });
          document.querySelectorAll("table.sortable").forEach(function (table) {
            table.querySelectorAll("thead th").forEach(function (th, column) {
              th.addEventListener("click", function () {
                var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
                var descending = th.dataset.order !== "desc";
                th.dataset.order = descending ? "desc" : "asc";
                function key(row) {
                  var cell = row.cells[column], v = cell.dataset.value;
                  return v !== undefined ? parseFloat(v) : cell.textContent;
                }
                rows.sort(function (a, b) {
                  var x = key(a), y = key(b), order = x < y ? -1 : x > y ? 1 : 0;
                  return descending ? -order : order;
                });
                rows.forEach(function (row) { body.appendChild(row); });
              });
            });
          });
          var charts = document.querySelectorAll("svg.chart"), drawn = 0;
          charts.forEach(function (svg) {
            var box = svg.getBoundingClientRect();
            svg.dataset.rendered = Math.round(box.width) + "x" + Math.round(box.height);
            if (box.width > 0 && box.height > 0) drawn += 1;
          });
          document.documentElement.dataset.chartsRendered = drawn + "/" + charts.length;
          // An address broken across lines shows as two rects: count them (0 is right).
          var wrapped = 0;
          document.querySelectorAll("code.addr").forEach(function (a) { if (a.getClientRects().length > 1) wrapped += 1; });
          document.documentElement.dataset.addressesWrapped = String(wrapped);
        })();
        """
}
