//! The page in a real browser: headless Chromium loads it, a script appended to a copy of it
//! hovers and clicks, and `--dump-dom` brings back what it found. These tests fail, never
//! skip, when no Chromium can be found (`scripts/test-browser.sh` installs it).
//!
//! Run: `cargo test --release -p dogana-show --features browser --test browser`.
//! `DOGANA_BLESS=1` rewrites the reference screenshot (tests/reference/small.png) and
//! docs/show.png from this machine.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use common::{small, Builder};
use dogana::Ledger;
use dogana_show::{render, Options};
use serde_json::Value as Json;

fn chromium() -> PathBuf {
    if let Some(p) = std::env::var_os("CHROMIUM") {
        return PathBuf::from(p);
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for name in [
        "chromium",
        "chromium-browser",
        "google-chrome",
        "google-chrome-stable",
    ] {
        for dir in std::env::split_paths(&path) {
            let p = dir.join(name);
            if p.is_file() {
                return p;
            }
        }
    }
    panic!(
        "no Chromium found on PATH (chromium, chromium-browser, google-chrome): the browser tests need headless Chromium; install it with `apt-get update && apt-get install -y chromium` (scripts/test-browser.sh does), or set CHROMIUM to its path"
    );
}

fn run_chromium(args: &[&str], page: &Path) -> String {
    let profile = tempfile::tempdir().unwrap();
    let out = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--hide-scrollbars",
            "--force-device-scale-factor=1",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(args)
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap_or_else(|e| panic!("cannot run Chromium ({}): {e}", chromium().display()));
    assert!(
        out.status.success(),
        "Chromium failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Alert and confirm are trapped before the page runs: a call is recorded, never shown.
const TRAP: &str = "<script>window.__alerts=[];window.alert=window.confirm=window.prompt=function(m){window.__alerts.push(String(m));};</script>";

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            out.push(u8::from_str_radix(&s[i + 1..i + 3], 16).unwrap());
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).unwrap()
}

/// Loads `page` with `test` (JavaScript filling the object `R`) run after the page's script;
/// returns `R`.
fn probe(page: &str, test: &str) -> Json {
    let dir = tempfile::tempdir().unwrap();
    let head = page.find("<head>").unwrap() + "<head>".len();
    let body = page.rfind("</body>").unwrap();
    let script = format!(
        "<script>(function(){{var R={{}};try{{{test}}}catch(e){{R.error=String(e)+' '+e.stack;}}var p=document.createElement('pre');p.id='test-result';p.textContent=encodeURIComponent(JSON.stringify(R));document.body.appendChild(p);}})();</script>"
    );
    let copy = format!(
        "{}{TRAP}{}{script}{}",
        &page[..head],
        &page[head..body],
        &page[body..]
    );
    let file = dir.path().join("page.html");
    std::fs::write(&file, copy).unwrap();
    let dom = run_chromium(&["--dump-dom"], &file);
    let start = dom.find("<pre id=\"test-result\">").unwrap_or_else(|| {
        panic!(
            "no test result in the page: {}",
            &dom[..dom.len().min(2000)]
        )
    }) + "<pre id=\"test-result\">".len();
    let end = start + dom[start..].find("</pre>").unwrap();
    let r: Json = serde_json::from_str(&percent_decode(&dom[start..end])).unwrap();
    assert!(
        r.get("error").is_none(),
        "the test script failed: {}",
        r["error"]
    );
    r
}

fn strings(v: &Json) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap().to_owned())
        .collect()
}

fn claims_lines(ledger: &Ledger, o: &Options) -> Vec<String> {
    let table = ledger.contract().table();
    ledger
        .claims(o.at, o.limit, None)
        .unwrap()
        .regions()
        .iter()
        .map(|c| c.to_string()[table.len() + 1..].to_owned())
        .collect()
}

const BANDS: &str = "function bands(id){return Array.prototype.map.call(document.querySelectorAll('#'+id+' .band'),function(b){return b.title.split('\\n')[0];});}";

#[test]
fn one_band_per_region_and_each_hover_is_the_region_s_claim() {
    let o = common::options();
    let b = small("orders");
    let page = render(&[b.history()], &o).unwrap();
    let r = probe(
        &page,
        "var bs=document.querySelectorAll('#now-0 .band');R.titles=[];R.classes=[];R.hovers=[];\
         bs.forEach(function(b){R.titles.push(b.title);R.classes.push(b.className);\
         b.dispatchEvent(new MouseEvent('mouseover',{bubbles:true}));\
         R.hovers.push(document.getElementById('hover-0').textContent);});",
    );
    let expected = claims_lines(&b.ledger, &o);
    let titles = strings(&r["titles"]);
    assert_eq!(titles.len(), b.ledger.region_count(), "one band per region");
    let first_lines: Vec<&str> = titles
        .iter()
        .map(|t| t.split('\n').next().unwrap())
        .collect();
    assert_eq!(first_lines, expected);
    assert_eq!(
        strings(&r["hovers"]),
        titles,
        "the hover line shows the band's claim"
    );
    let claims = b.ledger.claims(o.at, o.limit, None).unwrap();
    for ((class, title), claim) in strings(&r["classes"])
        .iter()
        .zip(&titles)
        .zip(claims.regions())
    {
        let code = claim.state() as u8;
        assert!(class.contains(&format!("s{code}")), "{class} for {claim}");
        // The patched gap is spelled out: deletions as of d, complete as of c.
        assert_eq!(
            title.contains("patched gap: deletions as of"),
            claim.state() == dogana::State::Patched,
            "{title}"
        );
    }
}

/// The ledger after each receipt, by `Ledger::follow`, as the new ledger before the first.
fn after_each(b: &Builder) -> Vec<Ledger> {
    let mut ledger = Ledger::new(b.contract());
    b.receipts
        .iter()
        .map(|r| {
            if r.accepted() {
                ledger = ledger.follow(r).unwrap();
            }
            ledger.clone()
        })
        .collect()
}

#[test]
fn clicking_a_history_step_shows_the_ledger_after_its_receipt() {
    let o = common::options();
    let b = small("orders");
    let page = render(&[b.history()], &o).unwrap();
    let r = probe(
        &page,
        &format!(
            "{BANDS}R.steps=[];for(var e=0;e<{};e++){{\
             document.querySelector('#nearby button.step[data-e=\"'+e+'\"]').click();\
             R.steps.push({{bands:bands('hist-0'),seq:document.getElementById('receipt').dataset.seq,\
             caption:document.getElementById('caption-0').textContent}});}}",
            b.receipts.len()
        ),
    );
    let steps = r["steps"].as_array().unwrap();
    assert_eq!(steps.len(), b.receipts.len());
    for (i, (step, ledger)) in steps.iter().zip(after_each(&b)).enumerate() {
        assert_eq!(
            step["seq"],
            (i + 1).to_string(),
            "the panel names receipt {}",
            i + 1
        );
        assert_eq!(
            strings(&step["bands"]),
            claims_lines(&ledger, &o),
            "after receipt {}: {}",
            i + 1,
            step["caption"]
        );
    }
}

#[test]
fn clicking_the_timeline_selects_the_receipt_there() {
    let o = common::options();
    let b = small("orders");
    let page = render(&[b.history()], &o).unwrap();
    // The first receipt sits at the timeline's left end (its earliest instant).
    let r = probe(
        &page,
        "var c=document.getElementById('timeline-canvas'),q=c.getBoundingClientRect();\
         c.dispatchEvent(new MouseEvent('click',{bubbles:true,clientX:q.left+110,clientY:q.top+5}));\
         R.seq=document.getElementById('receipt').dataset.seq;R.scrub=document.getElementById('scrub').value;R.w=c.clientWidth;R.left=q.left;",
    );
    assert_eq!(r["seq"], "1", "{r}");
    assert_eq!(r["scrub"], "0");
}

#[test]
fn a_refusal_lists_its_failed_checks_and_links_to_its_receipt() {
    let o = common::options();
    let b = small("orders");
    let page = render(&[b.history()], &o).unwrap();
    let r = probe(
        &page,
        "R.refusals=Array.prototype.map.call(document.querySelectorAll('#refusals-0 li.refusal'),function(li){\
         return {seq:li.dataset.seq,failed:Array.prototype.map.call(li.querySelectorAll('ul.failed li'),function(f){return f.textContent;})};});\
         document.querySelector('#refusals-0 li.refusal button').click();\
         R.panel=document.getElementById('receipt').dataset.seq;\
         R.checks=Array.prototype.map.call(document.querySelectorAll('#checks li.fail'),function(f){return f.textContent;});",
    );
    let refused: Vec<(usize, &dogana::Receipt)> = b
        .receipts
        .iter()
        .enumerate()
        .filter(|(_, r)| !r.accepted())
        .collect();
    let got = r["refusals"].as_array().unwrap();
    assert_eq!(got.len(), refused.len());
    for (g, (i, receipt)) in got.iter().zip(&refused) {
        assert_eq!(g["seq"], (i + 1).to_string());
        let want: Vec<String> = receipt
            .failures()
            .map(|c| format!("{}: {}", c.name(), c.detail()))
            .collect();
        assert_eq!(strings(&g["failed"]), want);
    }
    assert_eq!(r["panel"], (refused[0].0 + 1).to_string());
    let want: Vec<String> = refused[0]
        .1
        .failures()
        .map(|c| format!("{}: FAILED: {}", c.name(), c.detail()))
        .collect();
    assert_eq!(strings(&r["checks"]), want);
}

#[test]
fn the_group_s_exact_instant_is_shown_at_each_step_and_at_the_reader_s_time() {
    let (inv, lines) = common::together();
    let o = Options::new(common::t("2026-10-27T00:00:00Z"), dogana::Duration::MAX);
    let html = render(&[inv.history(), lines.history()], &o).unwrap();
    let r = probe(
        &html,
        "R.now=document.getElementById('group-now').textContent;R.steps=[];\
         for(var e=0;e<3;e++){window.doganaShow.select(e);R.steps.push(document.getElementById('group-step').textContent);}",
    );
    assert_eq!(
        r["now"],
        "The group at 2026-10-27T00:00:00+00:00: exact at no single instant"
    );
    let steps = strings(&r["steps"]);
    assert!(
        steps[0].ends_with("the group is exact at no single instant"),
        "{}",
        steps[0]
    );
    assert!(
        steps[1].ends_with("the group is exact at 2026-10-25T06:00:00+00:00"),
        "{}",
        steps[1]
    );
    assert!(
        steps[2].ends_with("the group is exact at no single instant"),
        "{}",
        steps[2]
    );
}

#[test]
fn markup_in_names_sources_details_and_values_is_shown_never_run() {
    let b = common::hostile();
    let o = common::options();
    let html = render(&[b.history()], &o).unwrap();
    let r = probe(
        &html,
        "R.alerts=window.__alerts;R.imgs=document.querySelectorAll('img').length;\
         R.scripts=document.scripts.length;R.h2=document.querySelector('#table-0 h2').textContent;\
         R.title=document.title;R.failed=document.querySelector('#refusals-0 ul.failed li').textContent;\
         R.band=document.querySelector('#now-0 .band[data-i=\"1\"]').title;\
         window.doganaShow.select(0);R.src=Array.prototype.map.call(document.querySelectorAll('#receipt dd'),function(d){return d.textContent;});",
    );
    assert_eq!(
        r["alerts"],
        Json::Array(vec![]),
        "nothing the data holds ran"
    );
    assert_eq!(r["imgs"], 0);
    // The trap, the data, the page's script and the test's: no other.
    assert_eq!(r["scripts"], 4);
    let table = b.ledger.contract().table().to_owned();
    assert_eq!(r["h2"], table.as_str());
    assert_eq!(r["title"], format!("dogana show: {table}"));
    assert_eq!(r["failed"], "rows: detail <script>alert(1)</script> & more");
    assert!(
        r["band"].as_str().unwrap().starts_with(
            "[\"</script><script>alert(3)</script>\", \"<script>alert(1)</script>\"]: complete"
        ),
        "{}",
        r["band"]
    );
    // A line separator in the source is shown as its escape, as on the command line.
    let source = b.source.clone().unwrap();
    assert!(source.contains('\u{2028}'), "the fixture holds a separator");
    assert!(
        strings(&r["src"]).contains(&dogana::shown(&source).into_owned()),
        "{:?}",
        r["src"]
    );
}

/// Average colour of each 10×10 block.
fn blocks(png_bytes: &[u8]) -> (u32, u32, Vec<[f64; 3]>) {
    let decoder = png::Decoder::new(png_bytes);
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = info.color_type.samples();
    let (w, h) = (info.width, info.height);
    let (bw, bh) = (w.div_ceil(10), h.div_ceil(10));
    let mut sums = vec![[0f64; 4]; (bw * bh) as usize];
    for y in 0..h {
        for x in 0..w {
            let i = ((y * w + x) as usize) * channels;
            let b = &mut sums[((y / 10) * bw + x / 10) as usize];
            for c in 0..3 {
                b[c] += f64::from(buf[i + c.min(channels - 1)]);
            }
            b[3] += 1.0;
        }
    }
    let avg = sums
        .iter()
        .map(|s| [s[0] / s[3], s[1] / s[3], s[2] / s[3]])
        .collect();
    (w, h, avg)
}

#[test]
fn the_small_page_looks_like_its_reference_screenshot() {
    let html = render(&[small("orders").history()], &common::options()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("small.html");
    std::fs::write(&page, html).unwrap();
    let shot = dir.path().join("small.png");
    run_chromium(
        &[
            "--window-size=1200,1000",
            &format!("--screenshot={}", shot.display()),
        ],
        &page,
    );
    let got = std::fs::read(&shot).unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let reference = root.join("tests/reference/small.png");
    if std::env::var_os("DOGANA_BLESS").is_some() {
        std::fs::create_dir_all(reference.parent().unwrap()).unwrap();
        std::fs::write(&reference, &got).unwrap();
        std::fs::write(root.join("../../docs/show.png"), &got).unwrap();
    }
    let want = std::fs::read(&reference).unwrap_or_else(|e| {
        panic!(
            "no reference screenshot {}: {e}; make it with DOGANA_BLESS=1",
            reference.display()
        )
    });
    let (w1, h1, a) = blocks(&got);
    let (w2, h2, b) = blocks(&want);
    assert_eq!((w1, h1), (w2, h2), "the screenshot's size");
    // Fonts may render a little differently: a block differs when its average colour moves
    // by more than 24 of 255 in a channel, and at most 2% of blocks may differ.
    let differ = a
        .iter()
        .zip(&b)
        .filter(|(p, q)| (0..3).any(|c| (p[c] - q[c]).abs() > 24.0))
        .count();
    let share = differ as f64 / a.len() as f64;
    if share > 0.02 {
        let kept = std::env::temp_dir().join("dogana-show-small.png");
        std::fs::write(&kept, &got).unwrap();
        panic!(
            "{differ} of {} blocks ({:.1}%) differ from {}; the screenshot is kept at {}",
            a.len(),
            share * 100.0,
            reference.display(),
            kept.display()
        );
    }
}

#[test]
fn a_large_history_opens_in_under_two_seconds_and_ten_megabytes() {
    let start = Instant::now();
    let b = common::many(10_000, 200);
    let mut h = b.history();
    h.ledger = Some(common::wide(100_000));
    let built = start.elapsed();
    let start = Instant::now();
    let html = render(&[h], &common::options()).unwrap();
    let rendered = start.elapsed();
    assert!(html.len() < 10_000_000, "{} bytes", html.len());
    // The least of three loads: other work on the machine only ever adds time.
    let runs: Vec<Json> = (0..3).map(|_| probe(
        &html,
        "R.loaded=performance.now();R.script=+document.body.dataset.renderMs;\
         R.bands=document.querySelectorAll('#now-0 .band').length;\
         R.agg=document.querySelectorAll('#now-0 .band.agg').length;\
         R.verify=document.querySelector('#table-0 .verify').textContent;\
         var t=performance.now();window.doganaShow.select(0);window.doganaShow.select(9999);R.scrub=performance.now()-t;",
    )).collect();
    let loads: Vec<f64> = runs.iter().map(|r| r["loaded"].as_f64().unwrap()).collect();
    let r = runs
        .iter()
        .min_by(|a, b| {
            a["loaded"]
                .as_f64()
                .unwrap()
                .total_cmp(&b["loaded"].as_f64().unwrap())
        })
        .unwrap()
        .clone();
    eprintln!(
        "large page: {} bytes; fixture {built:.2?}, render {rendered:.2?}; in Chromium (loads {loads:.0?} ms): loaded and drawn {:.0} ms after navigation (page script {:.0} ms), {} bands of which {} aggregates, first-to-last step {:.0} ms",
        html.len(),
        r["loaded"].as_f64().unwrap(),
        r["script"].as_f64().unwrap(),
        r["bands"],
        r["agg"],
        r["scrub"].as_f64().unwrap()
    );
    assert!(r["loaded"].as_f64().unwrap() < 2000.0, "{r}");
    assert!(
        r["verify"]
            .as_str()
            .unwrap()
            .starts_with("events: 1 problem"),
        "the stored 100,000 regions are not the fold: {}",
        r["verify"]
    );
    // Far more regions than pixels: aggregated.
    assert!(r["agg"].as_u64().unwrap() > 0);
}
