// rltrade python: `rltrade._train.PaperSession`, the compiled side of rltrade.paper.Session
// (python/rltrade/paper.py): paper::DrivenSession with the user's broker behind
// paper::ExternalBroker. The broker's methods come as three Python callables (the package
// wraps the user's object); an exception they raise becomes the Status that stops the
// session, and the package raises the original exception to the caller. Calls return
// (code, message) rather than raising, so the package chooses the exception class (a bad
// bar goes on, a stopped session does not). The GIL is held throughout: the session calls
// back into Python, and reports from other Python threads wait for the GIL.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "paper/driven.h"
#include "paper/external_broker.h"
#include "paper/session.h"
#include "python/bindings.h"

namespace py = pybind11;

namespace rlt::python {
namespace {

class PyBroker : public paper::ExternalBroker {
 public:
  PyBroker(py::object submit, py::object cancel, py::object positions)
      : submit_(std::move(submit)), cancel_(std::move(cancel)), positions_(std::move(positions)) {}

  Status Submit(const paper::ExternalOrder& o) override {
    try {
      py::dict order;
      order["client_order_id"] = o.client_order_id;
      order["symbol"] = o.symbol;
      order["side"] = o.buy ? "BUY" : "SELL";
      order["quantity"] = o.quantity;
      order["bar"] = o.bar;
      order["time"] = o.time;
      order["price"] = o.price;
      order["reason"] = o.reason;
      submit_(order);
      return Status::Ok();
    } catch (py::error_already_set& e) {
      return Status::IoError("broker.submit(" + o.client_order_id + ") raised " + e.what());
    }
  }

  Status Cancel(const std::string& id) override {
    try {
      cancel_(id);
      return Status::Ok();
    } catch (py::error_already_set& e) {
      return Status::IoError("broker.cancel(" + id + ") raised " + e.what());
    }
  }

  Result<std::map<std::string, double>> Positions() override {
    try {
      py::object held = positions_();
      std::map<std::string, double> out;
      for (const auto& item : held.cast<py::dict>()) {
        out[py::str(item.first).cast<std::string>()] = item.second.cast<double>();
      }
      return out;
    } catch (py::error_already_set& e) {
      return Status::IoError(std::string("broker.positions() raised ") + e.what());
    } catch (py::cast_error& e) {
      return Status::InvalidArgument(
          "broker.positions() must return a mapping of symbol to shares held (e.g. "
          "{\"ACME\": 100.0}): " +
          std::string(e.what()));
    }
  }

 private:
  py::object submit_, cancel_, positions_;
};

py::tuple Code(const Status& s) { return py::make_tuple(static_cast<int>(s.code()), s.message()); }

class PySession {
 public:
  PySession(const py::dict& request, py::object submit, py::object cancel, py::object positions) {
    paper::PaperRequest r;
    r.run_dir = request["run_dir"].cast<std::string>();
    r.journal_dir = request["journal"].cast<std::string>();
    r.risk_path = request["risk"].cast<std::string>();
    r.start = request["start"].cast<std::string>();
    r.checkpoint = request["checkpoint"].cast<std::string>();
    r.account = request["account"].cast<std::string>();
    r.fsync = request["fsync"].cast<std::string>();
    r.symbol = request["symbol"].cast<std::string>();
    r.ensemble = request["ensemble"].cast<std::string>();
    r.data_file = request["data"].cast<std::string>();
    r.allow_in_sample = request["allow_in_sample"].cast<bool>();
    r.allow_mismatch = request["allow_mismatch"].cast<bool>();
    r.allow_data_change = request["allow_data_change"].cast<bool>();
    r.quiet = request["quiet"].cast<bool>();
    if (!request["seed"].is_none()) r.seed = request["seed"].cast<uint64_t>();
    auto broker =
        std::make_shared<PyBroker>(std::move(submit), std::move(cancel), std::move(positions));
    Result<std::unique_ptr<paper::DrivenSession>> opened =
        paper::DrivenSession::Open(r, std::move(broker));
    if (!opened.ok()) Raise(opened.status(), "paper session");
    session_ = std::move(*opened);
  }

  py::tuple Start() { return Code(session_->Start()); }
  py::tuple OnBar(int64_t time, double open, double high, double low, double close, double volume) {
    return Code(session_->OnBar(paper::FeedBar{time, open, high, low, close, volume, -1}));
  }
  py::tuple OnTick(int64_t time_ms, double price, double size) {
    return Code(session_->OnTick(time_ms, price, size));
  }
  py::tuple OnFill(const std::string& id, double quantity, double price, double fee) {
    return Code(session_->OnFill(id, quantity, price, fee));
  }
  py::tuple OnReject(const std::string& id, const std::string& reason, bool retryable) {
    return Code(session_->OnReject(id, reason, retryable));
  }
  py::tuple Idle() { return Code(session_->Idle()); }
  py::tuple Finish(bool interrupted) {
    Result<paper::PaperOutcome> out = session_->Finish(interrupted);
    if (!out.ok())
      return py::make_tuple(static_cast<int>(out.status().code()), out.status().message());
    return py::make_tuple(0, out->summary_json);
  }
  void Fail(const std::string& why) { session_->Fail(Status::IoError(why)); }

  std::string journal_dir() const { return session_->journal_dir(); }
  bool finished() const { return session_->finished(); }
  bool failed() const { return session_->failed(); }
  py::dict counts() const {
    const paper::PaperSession& s = session_->session();
    py::dict d;
    d["bars"] = static_cast<int64_t>(s.bars().size());
    d["open_orders"] = s.open_orders();
    d["dropped_bad"] = s.dropped_bad();
    d["dropped_outside_session"] = s.dropped_outside_session();
    d["unknown_fills"] = s.unknown_fills();
    d["position"] = static_cast<double>(s.book().shares);
    d["cash"] = s.book().cash;
    return d;
  }

 private:
  std::unique_ptr<paper::DrivenSession> session_;
};

}  // namespace

void BindPaper(py::module_& m) {
  py::class_<PySession>(m, "PaperSession")
      .def(py::init<const py::dict&, py::object, py::object, py::object>(), py::arg("request"),
           py::arg("submit"), py::arg("cancel"), py::arg("positions"))
      .def("start", &PySession::Start)
      .def("on_bar", &PySession::OnBar)
      .def("on_tick", &PySession::OnTick)
      .def("on_fill", &PySession::OnFill)
      .def("on_reject", &PySession::OnReject)
      .def("idle", &PySession::Idle)
      .def("finish", &PySession::Finish)
      .def("fail", &PySession::Fail)
      .def_property_readonly("journal_dir", &PySession::journal_dir)
      .def_property_readonly("finished", &PySession::finished)
      .def_property_readonly("failed", &PySession::failed)
      .def("counts", &PySession::counts);
  // Status codes, as the session's calls return them.
  m.attr("STATUS_IO_ERROR") = static_cast<int>(Status::Code::kIoError);
  m.attr("STATUS_REFUSED") = static_cast<int>(Status::Code::kRefused);
  m.attr("STATUS_NOT_FOUND") = static_cast<int>(Status::Code::kNotFound);
}

}  // namespace rlt::python
