// rltrade testing: rendering a page in headless Chromium, for the tests of every HTML
// report (evaluation, across seeds, walk-forward, tune): a screenshot, the DOM after the
// scripts ran, page errors and console messages caught by a probe script, and the number
// of distinct colours of a screenshot (a blank page has one). Header-only, test-only.
// Chromium is started as this machine needs (as root, no network): --no-sandbox and the
// background-networking, component-update and sync switches off, a fresh profile.
#ifndef RLT_TESTING_CHROMIUM_H_
#define RLT_TESTING_CHROMIUM_H_

#include <cstdlib>
#include <filesystem>
#include <string>

#include "testing/testing.h"

namespace rlt::testing {

inline constexpr const char* kChromium = "/usr/bin/chromium";

// Runs chromium headless on `html_path` with `mode` ("--dump-dom" or "--screenshot=PNG");
// stdout and stderr go to the given files. Returns the exit status.
inline int RunChromium(const std::filesystem::path& html_path, const std::string& mode,
                       const std::filesystem::path& out, const std::filesystem::path& err) {
  const std::filesystem::path profile = NewScratchDir("rlt_chromium_profile_");
  const std::string cmd =
      std::string("timeout 60 ") + kChromium +
      " --headless --no-sandbox --disable-gpu --disable-quic --no-first-run"
      " --disable-background-networking --disable-component-update --disable-sync"
      " --enable-logging=stderr --v=0 --user-data-dir=" +
      profile.string() + " --window-size=1200,2400 " + mode + " file://" + html_path.string() +
      " >" + out.string() + " 2>" + err.string();
  const int rc = std::system(cmd.c_str());
  std::filesystem::remove_all(profile);
  return rc;
}

// The page with a first script that records any error (script, resource) or
// console.error/warn as an attribute of <html>, visible in --dump-dom output.
inline std::string WithErrorProbe(const std::string& html) {
  const std::string probe =
      "<head><script>(function(){var d=document.documentElement;"
      "window.addEventListener('error',function(e){d.setAttribute('data-page-error',"
      "String(e.message||(e.target&&(e.target.src||e.target.href))||'error'));},true);"
      "['error','warn'].forEach(function(k){var o=console[k];console[k]=function(){"
      "d.setAttribute('data-console-'+k,Array.prototype.join.call(arguments,' '));"
      "return o.apply(console,arguments);};});})();</script>";
  std::string out = html;
  const size_t at = out.find("<head>");
  return at == std::string::npos ? out : out.replace(at, 6, probe);
}

// "" when the page rendered without errors, else what went wrong.
inline std::string PageErrors(const std::filesystem::path& dir, const std::string& html,
                              const std::string& name) {
  const std::filesystem::path page = dir / (name + ".html");
  WriteFile(page, WithErrorProbe(html));
  const std::filesystem::path out = dir / (name + ".dom"), err = dir / (name + ".err");
  if (RunChromium(page, "--dump-dom", out, err) != 0) return "chromium failed: " + ReadFile(err);
  const std::string dom = ReadFile(out), log = ReadFile(err);
  if (dom.find("</html>") == std::string::npos) return "no DOM dumped: " + log;
  for (const char* marker : {"data-page-error=", "data-console-error=", "data-console-warn="}) {
    if (dom.find(marker) != std::string::npos) return std::string(marker) + " in DOM";
  }
  if (log.find(":CONSOLE(") != std::string::npos) return "console message: " + log;
  return "";
}

// The number of distinct RGBA pixel values of a PNG (decoded with python3's zlib), or -1.
inline long DistinctPixelValues(const std::filesystem::path& png,
                                const std::filesystem::path& dir) {
  const std::filesystem::path script = dir / "count_colours.py", out = dir / "colours.txt";
  WriteFile(script, R"(import sys, zlib, struct
data = open(sys.argv[1], 'rb').read()
assert data[:8] == b'\x89PNG\r\n\x1a\n'
pos, idat, w, h, depth, ctype = 8, b'', 0, 0, 0, 0
while pos < len(data):
    n, kind = struct.unpack('>I4s', data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b'IHDR': w, h, depth, ctype = struct.unpack('>IIBB', body[:10])
    if kind == b'IDAT': idat += body
    pos += 12 + n
assert depth == 8 and ctype in (2, 6)
bpp = 4 if ctype == 6 else 3
raw, stride, prev, colours = zlib.decompress(idat), w * bpp, bytearray(w * bpp), set()
for y in range(h):
    f, row = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    if f == 1:
        for i in range(bpp, stride): row[i] = (row[i] + row[i - bpp]) & 255
    elif f == 2:
        row = bytearray((a + b) & 255 for a, b in zip(row, prev))
    elif f == 3:
        for i in range(stride): row[i] = (row[i] + ((row[i - bpp] if i >= bpp else 0) + prev[i]) // 2) & 255
    elif f == 4:
        for i in range(stride):
            a = row[i - bpp] if i >= bpp else 0; b = prev[i]; c = prev[i - bpp] if i >= bpp else 0
            p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            row[i] = (row[i] + (a if pa <= pb and pa <= pc else (b if pb <= pc else c))) & 255
    if y % 4 == 0: colours.update(bytes(row[i:i + bpp]) for i in range(0, stride, bpp))
    prev = row
print(len(colours))
)");
  const std::string cmd = "python3 " + script.string() + " " + png.string() + " >" + out.string();
  if (std::system(cmd.c_str()) != 0) return -1;
  return std::atol(ReadFile(out).c_str());
}

}  // namespace rlt::testing

#endif  // RLT_TESTING_CHROMIUM_H_
