// rltrade core: Collective — the sums and gathers a data-parallel learner needs from the
// group of processes it trains with, without naming the transport.
//
// What it is: an interface the learner, the normaliser and the trainer call at the same
// points on every member of the group; dist::WorldCollective() (dist/dist.h) implements it
// over MPI_COMM_WORLD, LocalCollective below is the group of one. The calls are
// collectives: every member must make them in the same order with the same sizes, and
// every member gets the same result.
// Why an interface: the learner stays free of MPI, and a test can run the data-parallel
// code path in one process (LocalCollective) as the reference for the K-process run.
// Not thread-safe: call from one thread per process.
#ifndef RLT_CORE_COLLECTIVE_H_
#define RLT_CORE_COLLECTIVE_H_

#include <cstdint>
#include <string>
#include <vector>

namespace rlt {

class Collective {
 public:
  virtual ~Collective() = default;
  virtual int rank() const = 0;  // 0..size()-1
  virtual int size() const = 0;
  // In place: data[k] becomes the sum over the members of their data[k]. `what` names the
  // call in the message a timeout prints (dist::WorldCollective).
  virtual void SumDoubles(double* data, int64_t n, const char* what) = 0;
  virtual void SumFloats(float* data, int64_t n, const char* what) = 0;
  // Every member's bytes, in member order, on every member.
  virtual std::vector<std::string> Allgather(const std::string& mine, const char* what) = 0;
};

// The group of one: sums are the identity, the gather returns {mine}.
class LocalCollective : public Collective {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void SumDoubles(double*, int64_t, const char*) override {}
  void SumFloats(float*, int64_t, const char*) override {}
  std::vector<std::string> Allgather(const std::string& mine, const char*) override {
    return {mine};
  }
};

}  // namespace rlt

#endif  // RLT_CORE_COLLECTIVE_H_
