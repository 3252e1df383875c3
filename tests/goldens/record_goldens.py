#!/usr/bin/env python3
"""Records the outside goldens that our C++ tests must reproduce (issue 8, section 4).

It runs the *real* Gymnasium 0.29.1 and Stable-Baselines3 2.3.0 sources, extracted from
their git repositories at a pinned tag, with Debian 12's python3-torch / python3-numpy,
and writes JSON fixtures (data only) whose "provenance" header names every version and
commit involved:

  src/env/envs/testdata/gym_cartpole_v1.json   CartPole-v1 episodes (fixed seeds + actions)
  src/env/envs/testdata/gym_pendulum_v1.json   Pendulum-v1 episodes (fixed seeds + actions)
  src/learn/testdata/sb3_ppo_discrete.json     one PPO update of SB3 on CartPole-v1
  src/learn/testdata/sb3_ppo_box.json          one PPO update of SB3 on Pendulum-v1

Usage (Debian 12; see src/learn/testdata/README.md):
  apt-get install python3-torch python3-numpy python3-cloudpickle python3-pandas \
      python3-matplotlib python3-typing-extensions
  /usr/bin/python3 tests/goldens/record_goldens.py \
      --gymnasium-git /path/to/Gymnasium.git --sb3-git /path/to/stable-baselines3.git

The peer sources are extracted (git archive) into a scratch directory outside the
repository and only imported from there; nothing of them is written into the tree.
"""

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def extract(git_dir, ref, package, scratch):
    """Extracts `package` of `ref` from the bare repository into scratch; returns the commit."""
    commit = subprocess.run(["git", "--git-dir", git_dir, "rev-parse", ref + "^{commit}"],
                            check=True, capture_output=True, text=True).stdout.strip()
    archive = subprocess.run(["git", "--git-dir", git_dir, "archive", commit, package],
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", scratch], input=archive, check=True)
    return commit


def f64(x):
    return float(x)


def floats(values):
    """A flat list of Python floats (float32 inputs are widened exactly)."""
    import numpy as np
    return [float(v) for v in np.asarray(values, dtype=np.float64).reshape(-1)]


def write_json(path, doc):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    text = json.dumps(doc, indent=1)
    # Lists of scalars on one line each (readable diffs, a third of the size).
    text = re.sub(r"\[\s*([^\[\]{}]*?)\s*\]",
                  lambda m: "[" + re.sub(r",\s+", ", ", m.group(1)) + "]", text)
    with open(path, "w") as f:
        f.write(text + "\n")
    print("wrote", os.path.relpath(path, REPO))


# --------------------------------------------------------------------------------------
# Gymnasium trajectories.


def cartpole_actions(kind):
    """Action rule for one episode. Returns (name, fn(t, obs) -> action)."""
    if kind == "alternate":
        return "pattern 0,0,1,1 repeated", lambda t, obs: (t // 2) % 2
    if kind == "left":
        return "always 0 (push left)", lambda t, obs: 0
    # A fixed linear controller: the recorded actions are the fixed sequence we replay.
    return ("balance: 1 if theta + 0.3 theta_dot + 0.05 x_dot > 0 else 0",
            lambda t, obs: int(obs[2] + 0.3 * obs[3] + 0.05 * obs[1] > 0))


def record_cartpole(gym, np):
    episodes = []
    for seed, kind in [(0, "alternate"), (1, "left"), (42, "balance"), (2024, "balance")]:
        env = gym.make("CartPole-v1")
        obs, _ = env.reset(seed=seed)
        rule, act = cartpole_actions(kind)
        ep = {"seed": seed, "action_rule": rule,
              "reset_obs": floats(obs), "reset_state": floats(env.unwrapped.state),
              "steps": []}
        t = 0
        while True:
            a = act(t, obs)
            obs, reward, terminated, truncated, _ = env.step(a)
            ep["steps"].append({"action": int(a), "obs": floats(obs),
                                "state": floats(env.unwrapped.state), "reward": f64(reward),
                                "terminated": bool(terminated), "truncated": bool(truncated)})
            t += 1
            if terminated or truncated:
                break
        env.close()
        episodes.append(ep)
    return episodes


def record_pendulum(gym, np):
    episodes = []
    rules = {
        # Torques beyond [-2, 2] check the clip; float32 as the env receives them.
        0: ("3 sin(0.21 t) as float32", lambda t: np.float32(3.0 * np.sin(0.21 * t))),
        7: ("constant 2.5 (clipped to 2) as float32", lambda t: np.float32(2.5)),
        123: ("0.37 (t mod 11) - 1.9 as float32", lambda t: np.float32(0.37 * (t % 11) - 1.9)),
    }
    for seed, (rule, act) in rules.items():
        env = gym.make("Pendulum-v1")
        obs, _ = env.reset(seed=seed)
        ep = {"seed": seed, "action_rule": rule,
              "reset_obs": floats(obs), "reset_state": floats(env.unwrapped.state),
              "steps": []}
        t = 0
        while True:
            a = np.array([act(t)], dtype=np.float32)
            obs, reward, terminated, truncated, _ = env.step(a)
            ep["steps"].append({"action": float(a[0]), "obs": floats(obs),
                                "state": floats(env.unwrapped.state), "reward": f64(reward),
                                "terminated": bool(terminated), "truncated": bool(truncated)})
            t += 1
            if terminated or truncated:
                break
        env.close()
        episodes.append(ep)
    return episodes


# --------------------------------------------------------------------------------------
# Stable-Baselines3 PPO: one rollout, its GAE, and one minibatch update.

SB3_NAME_TO_OURS = [
    ("mlp_extractor.policy_net.", "pi_net."),
    ("mlp_extractor.value_net.", "vf_net."),
]


def our_name(sb3_name):
    for a, b in SB3_NAME_TO_OURS:
        if sb3_name.startswith(a):
            return b + sb3_name[len(a):]
    return sb3_name


def tensors_by_name(named, np):
    return {our_name(k): {"shape": list(v.shape), "values": floats(v.detach().cpu().numpy())}
            for k, v in named}


def record_ppo(case, gym, np, th, sb3):
    from stable_baselines3 import PPO
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.logger import Logger

    venv = make_vec_env(case["env_id"], n_envs=case["n_envs"], seed=case["seed"],
                        env_kwargs=case["env_kwargs"])
    model = PPO("MlpPolicy", venv, seed=case["seed"], verbose=0, **case["ppo"])
    model.set_logger(Logger(folder=None, output_formats=[]))
    buf = model.rollout_buffer
    rec = {}

    # GAE: copy the inputs SB3 passes, then let SB3 compute.
    original_gae = buf.compute_returns_and_advantage

    def gae_hook(last_values, dones):
        rec["gae_in"] = {
            "rewards": floats(buf.rewards), "values": floats(buf.values),
            "episode_starts": floats(buf.episode_starts),
            "last_values": floats(last_values.clone().cpu().numpy()),
            "last_dones": floats(np.asarray(dones, dtype=np.float64)),
        }
        original_gae(last_values, dones)
        rec["gae_out"] = {"advantages": floats(buf.advantages), "returns": floats(buf.returns)}

    buf.compute_returns_and_advantage = gae_hook

    # The minibatches exactly as train() receives them.
    original_get = buf.get
    batches = []

    def get_hook(batch_size=None):
        for b in original_get(batch_size):
            batches.append(b)
            yield b

    buf.get = get_hook

    # Gradients before clipping (clip_grad_norm_ rescales them in place) and the norm.
    original_clip = th.nn.utils.clip_grad_norm_

    def clip_hook(parameters, max_norm, *args, **kwargs):
        parameters = list(parameters)
        rec["grads"] = tensors_by_name(
            [(n, p.grad) for n, p in model.policy.named_parameters()], np)
        norm = original_clip(parameters, max_norm, *args, **kwargs)
        rec["grad_norm"] = float(norm)
        return norm

    # The rollout is collected with theta_old; the update then starts from
    # theta = theta_old + noise, so the probability ratios differ from 1 as they do after
    # the first minibatch of an update (with theta_old itself every ratio is exactly 1).
    original_train = model.train

    def train_hook():
        gen = th.Generator().manual_seed(case["seed"] + 1)
        with th.no_grad():
            for p in model.policy.parameters():
                p.add_(case["perturb"] * th.randn(p.shape, generator=gen))
        rec["params"] = tensors_by_name(model.policy.state_dict().items(), np)
        th.nn.utils.clip_grad_norm_ = clip_hook
        try:
            original_train()
        finally:
            th.nn.utils.clip_grad_norm_ = original_clip

    model.train = train_hook
    n_samples = case["n_envs"] * case["ppo"]["n_steps"]
    model.learn(total_timesteps=n_samples)
    assert len(batches) == 1, "the case must be one epoch of one minibatch"
    b = batches[0]
    logged = model.logger.name_to_value
    p = model.policy
    ppo = case["ppo"]
    return {
        "env_id": case["env_id"], "env_kwargs": case["env_kwargs"],
        "n_envs": case["n_envs"], "seed": case["seed"],
        "policy": {
            "obs_dim": int(np.prod(venv.observation_space.shape)),
            "discrete": isinstance(venv.action_space, gym.spaces.Discrete),
            "act_dim": 1 if isinstance(venv.action_space, gym.spaces.Discrete)
            else int(np.prod(venv.action_space.shape)),
            "n": int(venv.action_space.n) if isinstance(venv.action_space,
                                                        gym.spaces.Discrete) else 0,
            "pi": list(ppo["policy_kwargs"]["net_arch"]["pi"]),
            "vf": list(ppo["policy_kwargs"]["net_arch"]["vf"]),
            "activation": "tanh",
        },
        "settings": {
            "learning_rate": ppo["learning_rate"], "n_steps": ppo["n_steps"],
            "batch_size": ppo["batch_size"], "n_epochs": ppo["n_epochs"],
            "gamma": ppo["gamma"], "gae_lambda": ppo["gae_lambda"],
            "clip_range": ppo["clip_range"],
            "clip_range_vf": ppo["clip_range_vf"] if ppo["clip_range_vf"] is not None else 0.0,
            "ent_coef": ppo["ent_coef"], "vf_coef": ppo["vf_coef"],
            "max_grad_norm": ppo["max_grad_norm"], "normalize_advantage": True,
            "adam_eps": float(p.optimizer.defaults["eps"]), "perturb": case["perturb"],
        },
        "gae": {"n_steps": ppo["n_steps"], "n_envs": case["n_envs"],
                "input": rec["gae_in"], "output": rec["gae_out"]},
        "minibatch": {
            "size": int(b.observations.shape[0]),
            "obs": floats(b.observations.numpy()), "actions": floats(b.actions.numpy()),
            "old_values": floats(b.old_values.numpy()),
            "old_log_probs": floats(b.old_log_prob.numpy()),
            "advantages": floats(b.advantages.numpy()), "returns": floats(b.returns.numpy()),
        },
        "params_before": rec["params"],
        "loss": {
            "policy": float(logged["train/policy_gradient_loss"]),
            "value": float(logged["train/value_loss"]),
            "entropy": float(logged["train/entropy_loss"]),
            "total": float(logged["train/loss"]),
            "approx_kl": float(logged["train/approx_kl"]),
            "clip_fraction": float(logged["train/clip_fraction"]),
        },
        "grads_before_clip": rec["grads"],
        "grad_norm_before_clip": rec["grad_norm"],
        "grads_after_clip": tensors_by_name(
            [(n, q.grad) for n, q in p.named_parameters()], np),
        "params_after": tensors_by_name(p.state_dict().items(), np),
    }


PPO_CASES = {
    "sb3_ppo_discrete.json": {
        "env_id": "CartPole-v1", "env_kwargs": {}, "n_envs": 2, "seed": 5, "perturb": 0.25,
        "ppo": {"learning_rate": 3e-3, "n_steps": 32, "batch_size": 64, "n_epochs": 1,
                "gamma": 0.95, "gae_lambda": 0.9, "clip_range": 0.2, "clip_range_vf": None,
                "ent_coef": 0.01, "vf_coef": 0.5, "max_grad_norm": 0.5,
                "policy_kwargs": {"net_arch": {"pi": [16, 8], "vf": [12]}}},
    },
    "sb3_ppo_box.json": {
        # max_episode_steps=8: time-limit truncations inside the rollout, so the
        # collector's bootstrap (reward += gamma V(terminal obs)) and episode_starts show.
        "env_id": "Pendulum-v1", "env_kwargs": {"max_episode_steps": 8}, "n_envs": 2,
        "seed": 11, "perturb": 0.05,
        "ppo": {"learning_rate": 1e-3, "n_steps": 12, "batch_size": 24, "n_epochs": 1,
                "gamma": 0.9, "gae_lambda": 0.8, "clip_range": 0.1, "clip_range_vf": 0.5,
                "ent_coef": 0.02, "vf_coef": 0.7, "max_grad_norm": 0.5,
                "policy_kwargs": {"net_arch": {"pi": [16, 8], "vf": [12]},
                                  "log_std_init": -0.5}},
    },
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gymnasium-git", required=True, help="bare git dir of Gymnasium")
    ap.add_argument("--gymnasium-ref", default="v0.29.1")
    ap.add_argument("--sb3-git", required=True, help="bare git dir of stable-baselines3")
    ap.add_argument("--sb3-ref", default="v2.3.0")
    ap.add_argument("--scratch", default=None, help="where to extract (default: a temp dir)")
    args = ap.parse_args()

    scratch = args.scratch or tempfile.mkdtemp(prefix="rlt_goldens_")
    if os.path.abspath(scratch).startswith(REPO + os.sep):
        sys.exit("--scratch must be outside the repository")
    os.makedirs(scratch, exist_ok=True)
    gym_commit = extract(args.gymnasium_git, args.gymnasium_ref, "gymnasium", scratch)
    sb3_commit = extract(args.sb3_git, args.sb3_ref, "stable_baselines3", scratch)
    sys.path.insert(0, scratch)

    import numpy as np
    import torch as th
    import gymnasium as gym
    import stable_baselines3 as sb3

    th.set_num_threads(1)
    base = {
        "generator": "tests/goldens/record_goldens.py",
        "python": platform.python_version(), "numpy": np.__version__,
        "torch": th.__version__, "machine": platform.machine(),
        "gymnasium": {"version": gym.__version__, "ref": args.gymnasium_ref,
                      "commit": gym_commit,
                      "repository": "https://github.com/Farama-Foundation/Gymnasium"},
    }
    with_sb3 = dict(base, stable_baselines3={
        "version": sb3.__version__, "ref": args.sb3_ref, "commit": sb3_commit,
        "repository": "https://github.com/DLR-RM/stable-baselines3"})

    env_dir = os.path.join(REPO, "src", "env", "envs", "testdata")
    write_json(os.path.join(env_dir, "gym_cartpole_v1.json"), {
        "provenance": base, "env_id": "CartPole-v1",
        "note": "gym.make('CartPole-v1') (TimeLimit 500); obs float32 widened to double; "
                "state = env.unwrapped.state (float64) after reset / each step",
        "episodes": record_cartpole(gym, np)})
    write_json(os.path.join(env_dir, "gym_pendulum_v1.json"), {
        "provenance": base, "env_id": "Pendulum-v1",
        "note": "gym.make('Pendulum-v1') (TimeLimit 200); actions float32 arrays of shape (1,); "
                "state = env.unwrapped.state (theta, theta_dot) float64",
        "episodes": record_pendulum(gym, np)})

    learn_dir = os.path.join(REPO, "src", "learn", "testdata")
    for name, case in PPO_CASES.items():
        doc = {"provenance": with_sb3,
               "note": "SB3 PPO('MlpPolicy').learn(n_envs * n_steps): one rollout, GAE, and one "
                       "epoch of one minibatch; parameters perturbed by N(0, perturb^2) between "
                       "rollout and update; tensor names mapped to ours "
                       "(mlp_extractor.policy_net -> pi_net, mlp_extractor.value_net -> vf_net)"}
        doc.update(record_ppo(case, gym, np, th, sb3))
        write_json(os.path.join(learn_dir, name), doc)


if __name__ == "__main__":
    main()
