//===- LlmcReport.cpp - `llmc report`: a run's curves as one HTML page ----===//
//
// Three steps: read each metrics file into a Run (a line that is not a
// JSON object with a numeric "step" and "loss" is an error at its line),
// lay out each chart (the range of every series on it, 1-2-5 ticks), and
// write the page: a legend, the charts as inline SVG, a table. A run of
// more than kMaxPoints steps is thinned to that many points per line (the
// first and last kept), which a 560-pixel chart cannot tell apart.
//
//===----------------------------------------------------------------------===//

#include "tools/LlmcReport.h"

#include "runtime/io/File.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>

namespace llmc::driver {

namespace {

constexpr size_t kMaxPoints = 2000;
constexpr double kWidth = 560, kHeight = 300;
// kTop: the title's band; each row of the legend below it takes kLegendRow.
constexpr double kLeft = 64, kRight = 16, kTop = 38, kBottom = 42;
constexpr double kLegendRow = 16;
// Colours that stay apart for the colour-blind (Okabe and Ito's palette).
const char *const kColours[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                "#E69F00", "#56B4E9", "#000000", "#F0E442"};

struct Step {
  double step = 0, loss = 0, tokens = 0;
  std::optional<double> lr, gradNorm, tokensPerSecond, mfu, valLoss;
};

struct Run {
  std::string path, name;
  std::vector<Step> steps;
};

std::optional<double> number(const nlohmann::json &line, const char *key) {
  auto it = line.find(key);
  if (it == line.end() || !it->is_number())
    return std::nullopt;
  return it->get<double>();
}

/// Reads `path`; on failure prints "path:line: error: ..." and returns false.
bool readRun(const std::string &path, Run &run) {
  run.path = path;
  run.name = llvm::sys::path::stem(path).str();
  std::ifstream in(path);
  if (!in || llvm::sys::fs::is_directory(path)) {
    llvm::errs() << path << ": error: cannot read the metrics file"
                 << (llvm::sys::fs::is_directory(path) ? " (a directory)"
                                                       : "")
                 << "\n";
    return false;
  }
  std::string text;
  double tokens = 0;
  for (int number_ = 1; std::getline(in, text); ++number_) {
    if (text.find_first_not_of(" \t\r") == std::string::npos)
      continue;
    nlohmann::json line = nlohmann::json::parse(text, nullptr, false);
    std::optional<double> step, loss;
    if (!line.is_discarded() && line.is_object()) {
      step = number(line, "step");
      loss = number(line, "loss");
    }
    if (!step || !loss) {
      llvm::errs() << path << ":" << number_ << ": error: expected a JSON "
                   << "object with a numeric \"step\" and \"loss\" (a line "
                   << "of llmc train --metrics), got: " << text.substr(0, 80)
                   << (text.size() > 80 ? "..." : "") << "\n";
      return false;
    }
    Step s;
    s.step = *step;
    s.loss = *loss;
    tokens += number(line, "tokens").value_or(0);
    s.tokens = tokens;
    s.lr = number(line, "lr");
    s.gradNorm = number(line, "grad_norm"); // null on a skipped fp16 step
    s.tokensPerSecond = number(line, "tokens_per_s");
    s.mfu = number(line, "mfu");
    if (s.mfu)
      *s.mfu *= 100;
    s.valLoss = number(line, "val_loss");
    run.steps.push_back(s);
  }
  if (run.steps.empty()) {
    llvm::errs() << path << ": error: no steps in the metrics file\n";
    return false;
  }
  return true;
}

/// One line of a chart: (x, y) points in data units.
struct Series {
  size_t run = 0;
  std::vector<std::pair<double, double>> points;
  bool dashed = false, markers = false;
  std::string label; // "" for the run's name
};

struct Chart {
  std::string title, xLabel, yLabel;
  std::vector<Series> series;
};

/// Ticks at 1, 2 or 5 times a power of ten covering [lo, hi].
std::vector<double> ticks(double lo, double hi) {
  double span = hi - lo;
  double raw = span / 5, power = std::pow(10.0, std::floor(std::log10(raw)));
  double step = raw / power < 1.5 ? power
                : raw / power < 3.5 ? 2 * power
                : raw / power < 7.5 ? 5 * power
                                    : 10 * power;
  std::vector<double> out;
  for (double t = std::ceil(lo / step) * step; t <= hi + step * 1e-9;
       t += step)
    out.push_back(std::abs(t) < step * 1e-9 ? 0 : t);
  return out;
}

std::string numberText(double value) {
  double magnitude = std::abs(value);
  char text[32];
  if (magnitude >= 1e6 || (magnitude > 0 && magnitude < 1e-3))
    std::snprintf(text, sizeof(text), "%.2g", value);
  else if (magnitude >= 1e4)
    std::snprintf(text, sizeof(text), "%.4gk", value / 1e3);
  else
    std::snprintf(text, sizeof(text), "%.4g", value);
  return text;
}

std::string escape(llvm::StringRef text) {
  std::string out;
  for (char c : text)
    out += c == '<' ? "&lt;" : c == '>' ? "&gt;" : c == '&' ? "&amp;"
         : c == '"' ? "&quot;" : std::string(1, c);
  return out;
}

std::vector<std::pair<double, double>>
thinned(const std::vector<std::pair<double, double>> &points) {
  if (points.size() <= kMaxPoints)
    return points;
  std::vector<std::pair<double, double>> out;
  double stride = static_cast<double>(points.size() - 1) / (kMaxPoints - 1);
  for (size_t i = 0; i < kMaxPoints; ++i)
    out.push_back(points[static_cast<size_t>(std::llround(i * stride))]);
  return out;
}

void writeChart(std::ostream &os, const Chart &chart,
                const std::vector<Run> &runs) {
  double x0 = std::numeric_limits<double>::infinity(), x1 = -x0, y0 = x0,
         y1 = -x0;
  for (const Series &s : chart.series)
    for (auto [x, y] : s.points) {
      x0 = std::min(x0, x), x1 = std::max(x1, x);
      y0 = std::min(y0, y), y1 = std::max(y1, y);
    }
  if (x1 <= x0)
    x1 = x0 + 1;
  if (y1 <= y0)
    y1 = y0 + (y0 == 0 ? 1 : std::abs(y0) * 0.1);
  double pad = (y1 - y0) * 0.05;
  y0 -= pad, y1 += pad;
  // The legend flows in rows between the title and the frame, never over a
  // curve: each entry a swatch and its label (about 6.5 px a character at
  // 11 px), wrapping at the right edge; the frame starts below its rows.
  double plotW = kWidth - kLeft - kRight;
  std::vector<std::pair<double, double>> legendAt; // (x, y) of each entry
  double lx = kLeft, ly = kTop;
  for (const Series &s : chart.series) {
    std::string label = s.label.empty() ? runs[s.run].name : s.label;
    double entryW = 24 + 6.5 * static_cast<double>(label.size()) + 16;
    if (lx > kLeft && lx + entryW > kLeft + plotW)
      lx = kLeft, ly += kLegendRow;
    legendAt.push_back({lx, ly});
    lx += entryW;
  }
  double top = ly + kLegendRow;
  double plotH = kHeight - top - kBottom;
  auto px = [&](double x) { return kLeft + (x - x0) / (x1 - x0) * plotW; };
  auto py = [&](double y) { return top + (y1 - y) / (y1 - y0) * plotH; };

  os << "<figure class=\"chart\"><svg xmlns=\"http://www.w3.org/2000/svg\" "
     << "viewBox=\"0 0 " << kWidth << " " << kHeight << "\" role=\"img\" "
     << "aria-label=\"" << escape(chart.title) << "\">\n";
  os << "<text class=\"title\" x=\"" << kLeft << "\" y=\"20\">"
     << escape(chart.title) << "</text>\n";
  for (double t : ticks(y0, y1))
    os << llvm::formatv("<line class=\"grid\" x1=\"{0:f1}\" x2=\"{1:f1}\" "
                        "y1=\"{2:f1}\" y2=\"{2:f1}\"/><text class=\"tick\" "
                        "x=\"{3:f1}\" y=\"{4:f1}\" text-anchor=\"end\">{5}"
                        "</text>\n",
                        kLeft, kLeft + plotW, py(t), kLeft - 6, py(t) + 4,
                        numberText(t))
              .str();
  for (double t : ticks(x0, x1))
    os << llvm::formatv("<line class=\"grid\" x1=\"{0:f1}\" x2=\"{0:f1}\" "
                        "y1=\"{1:f1}\" y2=\"{2:f1}\"/><text class=\"tick\" "
                        "x=\"{0:f1}\" y=\"{3:f1}\" text-anchor=\"middle\">{4}"
                        "</text>\n",
                        px(t), top, top + plotH, top + plotH + 16,
                        numberText(t))
              .str();
  os << llvm::formatv("<rect class=\"frame\" x=\"{0}\" y=\"{1}\" "
                      "width=\"{2}\" height=\"{3}\"/>\n",
                      kLeft, top, plotW, plotH)
            .str();
  os << "<text class=\"axis\" x=\"" << kLeft + plotW / 2 << "\" y=\""
     << kHeight - 6 << "\" text-anchor=\"middle\">" << escape(chart.xLabel)
     << "</text>\n";
  os << "<text class=\"axis\" transform=\"translate(14," << top + plotH / 2
     << ") rotate(-90)\" text-anchor=\"middle\">" << escape(chart.yLabel)
     << "</text>\n";
  for (const Series &s : chart.series) {
    const char *colour = kColours[s.run % std::size(kColours)];
    std::string label = s.label.empty() ? runs[s.run].name : s.label;
    os << "<g class=\"series\" data-run=\"" << escape(runs[s.run].name)
       << "\"><title>" << escape(label) << "</title>\n";
    std::vector<std::pair<double, double>> points = thinned(s.points);
    os << "<polyline fill=\"none\" stroke=\"" << colour
       << "\" stroke-width=\"1.6\"" << (s.dashed ? " stroke-dasharray=\"5 3\"" : "")
       << " points=\"";
    for (auto [x, y] : points)
      os << llvm::formatv("{0:f1},{1:f1} ", px(x), py(y)).str();
    os << "\"/>\n";
    if (s.markers)
      for (auto [x, y] : points)
        os << llvm::formatv("<circle cx=\"{0:f1}\" cy=\"{1:f1}\" r=\"2.6\" "
                            "fill=\"{2}\"/>",
                            px(x), py(y), colour)
                  .str();
    os << "</g>\n";
  }
  // The legend, at the places laid out above.
  for (size_t i = 0; i < chart.series.size(); ++i) {
    const Series &s = chart.series[i];
    const char *colour = kColours[s.run % std::size(kColours)];
    std::string label = s.label.empty() ? runs[s.run].name : s.label;
    auto [lx, ly] = legendAt[i];
    os << llvm::formatv("<g class=\"legend\"><line x1=\"{0:f1}\" x2=\"{1:f1}\""
                        " y1=\"{2:f1}\" y2=\"{2:f1}\" stroke=\"{3}\" "
                        "stroke-width=\"2\"{4}/><text x=\"{5:f1}\" "
                        "y=\"{6:f1}\">{7}</text></g>\n",
                        lx, lx + 18, ly, colour,
                        s.dashed ? " stroke-dasharray=\"5 3\"" : "", lx + 24,
                        ly + 4, escape(label))
              .str();
  }
  os << "</svg></figure>\n";
}

/// The charts of `runs`, leaving out a chart no run has data for.
std::vector<Chart> chartsOf(const std::vector<Run> &runs) {
  bool severalRuns = runs.size() > 1;
  Chart lossSteps{"Loss", "step", "loss", {}};
  Chart lossTokens{"Loss against tokens", "tokens", "loss", {}};
  Chart lr{"Learning rate", "step", "lr", {}};
  Chart norm{"Gradient norm", "step", "grad norm", {}};
  Chart speed{"Tokens per second", "step", "tok/s", {}};
  Chart mfu{"MFU", "step", "MFU (%)", {}};
  for (size_t r = 0; r < runs.size(); ++r) {
    std::string name = runs[r].name;
    Series train{r, {}, false, false, severalRuns ? name + " train" : "train"};
    Series val{r, {}, true, true, severalRuns ? name + " val" : "val"};
    Series trainTokens{r, {}, false, false, train.label};
    Series valTokens{r, {}, true, true, val.label};
    Series rate{r, {}, false, false, ""}, grad = rate, tps = rate,
        utilization = rate;
    for (const Step &s : runs[r].steps) {
      train.points.push_back({s.step, s.loss});
      trainTokens.points.push_back({s.tokens, s.loss});
      if (s.valLoss) {
        val.points.push_back({s.step, *s.valLoss});
        valTokens.points.push_back({s.tokens, *s.valLoss});
      }
      if (s.lr)
        rate.points.push_back({s.step, *s.lr});
      if (s.gradNorm)
        grad.points.push_back({s.step, *s.gradNorm});
      if (s.tokensPerSecond)
        tps.points.push_back({s.step, *s.tokensPerSecond});
      if (s.mfu)
        utilization.points.push_back({s.step, *s.mfu});
    }
    lossSteps.series.push_back(train);
    lossTokens.series.push_back(trainTokens);
    if (!val.points.empty()) {
      lossSteps.series.push_back(val);
      lossTokens.series.push_back(valTokens);
    }
    for (auto [chart, series] : {std::pair{&lr, &rate}, {&norm, &grad},
                                 {&speed, &tps}, {&mfu, &utilization}})
      if (!series->points.empty())
        chart->series.push_back(*series);
  }
  std::vector<Chart> charts;
  for (Chart *chart : {&lossSteps, &lossTokens, &lr, &norm, &speed, &mfu})
    if (!chart->series.empty())
      charts.push_back(*chart);
  return charts;
}

void writeTable(std::ostream &os, const std::vector<Run> &runs) {
  os << "<table><tr><th>run</th><th>steps</th><th>tokens</th><th>last "
        "loss</th><th>best val loss</th><th>median tok/s</th><th>median "
        "MFU</th></tr>\n";
  for (size_t r = 0; r < runs.size(); ++r) {
    const Run &run = runs[r];
    std::vector<double> speeds, mfus;
    std::optional<double> bestVal;
    for (const Step &s : run.steps) {
      if (s.tokensPerSecond)
        speeds.push_back(*s.tokensPerSecond);
      if (s.mfu)
        mfus.push_back(*s.mfu);
      if (s.valLoss && (!bestVal || *s.valLoss < *bestVal))
        bestVal = s.valLoss;
    }
    auto median = [](std::vector<double> v) -> std::string {
      if (v.empty())
        return "-";
      std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
      return numberText(v[v.size() / 2]);
    };
    // MFU in percent with one decimal in every row, so that rows compare.
    auto medianPercent = [](std::vector<double> v) -> std::string {
      if (v.empty())
        return "-";
      std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
      return llvm::formatv("{0:f1}%", v[v.size() / 2]).str();
    };
    os << "<tr><td><span class=\"swatch\" style=\"background:"
       << kColours[r % std::size(kColours)] << "\"></span>"
       << escape(run.path) << "</td><td>"
       << llvm::formatv("{0}-{1}",
                        static_cast<long long>(run.steps.front().step),
                        static_cast<long long>(run.steps.back().step))
              .str()
       << "</td><td>" << numberText(run.steps.back().tokens) << "</td><td>"
       << llvm::formatv("{0:f4}", run.steps.back().loss).str() << "</td><td>"
       << (bestVal ? llvm::formatv("{0:f4}", *bestVal).str() : "-")
       << "</td><td>" << median(speeds) << "</td><td>"
       << medianPercent(mfus) << "</td></tr>\n";
  }
  os << "</table>\n";
}

} // namespace

int runReport(const ReportCommand &options) {
  for (const std::string &input : options.inputs)
    if (bool same = false;
        !llvm::sys::fs::equivalent(input, options.output, same) && same) {
      llvm::errs() << "llmc report: -o " << options.output
                   << " is one of the metrics files; write the page "
                      "elsewhere\n";
      return kExitUsage;
    }
  std::vector<Run> runs(options.inputs.size());
  for (size_t i = 0; i < runs.size(); ++i)
    if (!readRun(options.inputs[i], runs[i]))
      return kExitRejected;
  std::string title = options.title;
  if (title.empty())
    for (const Run &run : runs)
      title += (title.empty() ? "" : ", ") + run.name;

  std::ostringstream page;
  page << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
       << "<title>" << escape(title) << "</title>\n<style>\n"
       << "body{font-family:sans-serif;margin:24px;color:#222}\n"
       << ".charts{display:grid;grid-template-columns:repeat(auto-fill,"
          "minmax(520px,1fr));gap:16px;margin-top:16px}\n"
       << ".chart{margin:0;border:1px solid #ddd;padding:4px}\n"
       << "svg{width:100%;height:auto;font-size:11px}\n"
       << ".title{font-size:14px;font-weight:bold}\n"
       << ".grid{stroke:#e6e6e6}.frame{fill:none;stroke:#999}\n"
       << ".tick{fill:#555}.axis{fill:#333}\n"
       << "table{border-collapse:collapse;margin-top:16px}th{white-space:nowrap}"
          "td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}"
          "td:first-child,th:first-child{text-align:left}\n"
       << ".swatch{display:inline-block;width:12px;height:12px;"
          "margin-right:6px;vertical-align:middle}\n"
       << "</style></head><body>\n<h1>" << escape(title) << "</h1>\n"
       << "<p>Written by " << escape(llmc::rt::versionLine())
       << " from " << runs.size()
       << (runs.size() == 1 ? " metrics file" : " metrics files")
       << ". Val loss dashed with dots; MFU as docs/training.md defines "
          "it.</p>\n";
  writeTable(page, runs);
  page << "<div class=\"charts\">\n";
  for (const Chart &chart : chartsOf(runs))
    writeChart(page, chart, runs);
  page << "</div>\n</body></html>\n";
  std::string text = page.str();
  if (llmc::rt::Status status = llmc::rt::writeFileAtomically(
          options.output, text.data(), text.size());
      !status) {
    llvm::errs() << "llmc report: " << status.message() << "\n";
    return kExitRejected;
  }
  llvm::outs() << "wrote " << options.output << ": " << runs.size()
               << (runs.size() == 1 ? " run, " : " runs, ")
               << chartsOf(runs).size() << " charts\n";
  return kExitOk;
}

} // namespace llmc::driver
