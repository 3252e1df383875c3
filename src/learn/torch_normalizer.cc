// rltrade learn: normalizer.pt reading and writing (see torch_normalizer.h).
#include "learn/torch_normalizer.h"

#include <torch/nn/module.h>
#include <torch/serialize.h>

#include <sstream>
#include <vector>

#include "learn/torch_error.h"

namespace rlt::learn {
namespace {

// The module whose buffers are the archive's tensors.
class NormalizerArchive : public torch::nn::Module {
 public:
  NormalizerArchive(int obs_dim, int num_envs) {
    const auto f64 = torch::TensorOptions().dtype(torch::kFloat64);
    obs_mean = register_buffer("obs_mean", torch::zeros({obs_dim}, f64));
    obs_var = register_buffer("obs_var", torch::ones({obs_dim}, f64));
    obs_count = register_buffer("obs_count", torch::zeros({1}, f64));
    ret_mean = register_buffer("ret_mean", torch::zeros({1}, f64));
    ret_var = register_buffer("ret_var", torch::ones({1}, f64));
    ret_count = register_buffer("ret_count", torch::zeros({1}, f64));
    returns = register_buffer("returns", torch::zeros({num_envs}, f64));
  }
  torch::Tensor obs_mean, obs_var, obs_count, ret_mean, ret_var, ret_count, returns;
};

torch::Tensor FromVector(const std::vector<double>& v) {
  return torch::tensor(v, torch::TensorOptions().dtype(torch::kFloat64));
}

std::vector<double> ToVector(const torch::Tensor& t) {
  const torch::Tensor c = t.to(torch::kFloat64).contiguous();
  return std::vector<double>(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
}

}  // namespace

Result<std::string> NormalizerToTorchArchive(const VecNormalizerImpl& normalizer) {
  const NormalizerStats& s = normalizer.stats();
  auto module = std::make_shared<NormalizerArchive>(normalizer.obs_dim(), normalizer.num_envs());
  module->obs_mean.copy_(FromVector(s.obs_mean));
  module->obs_var.copy_(FromVector(s.obs_var));
  module->obs_count.fill_(s.obs_count);
  module->ret_mean.fill_(s.ret_mean);
  module->ret_var.fill_(s.ret_var);
  module->ret_count.fill_(s.ret_count);
  module->returns.copy_(FromVector(s.returns));
  std::ostringstream bytes;
  try {
    torch::serialize::OutputArchive archive;
    module->save(archive);
    archive.save_to(bytes);
  } catch (const std::exception& e) {
    return Status::IoError("serialising the normaliser: " + TorchErrorMessage(e));
  }
  return bytes.str();
}

Status LoadNormalizerFromTorchArchive(const std::string& path, VecNormalizerImpl* normalizer) {
  auto module = std::make_shared<NormalizerArchive>(normalizer->obs_dim(), normalizer->num_envs());
  NormalizerStats s;
  try {
    torch::serialize::InputArchive archive;
    archive.load_from(path);
    module->load(archive);
    s.obs_mean = ToVector(module->obs_mean);
    s.obs_var = ToVector(module->obs_var);
    s.returns = ToVector(module->returns);
    for (auto [tensor, out] :
         {std::pair{&module->obs_count, &s.obs_count}, std::pair{&module->ret_mean, &s.ret_mean},
          std::pair{&module->ret_var, &s.ret_var}, std::pair{&module->ret_count, &s.ret_count}}) {
      if (tensor->numel() != 1) {
        return Status::DataError(path + ": a count or return statistic has " +
                                 std::to_string(tensor->numel()) +
                                 " values, expected 1 (not a normaliser archive)");
      }
      *out = tensor->to(torch::kFloat64).item<double>();
    }
  } catch (const std::exception& e) {
    return Status::DataError("reading " + path + ": " + TorchErrorMessage(e));
  }
  return normalizer->set_stats(s, path);
}

}  // namespace rlt::learn
