"""vwxyzjn/cleanrl's ppo.py (discrete actions) with a vectorised toy environment in place of gym's
SyncVectorEnv: layer_init (torch.nn.init.orthogonal_(layer.weight, std) and constant_(layer.bias, bias_const)
with std=np.sqrt(2) / 0.01 / 1.0), Agent.get_action_and_value (Categorical(logits=logits), probs.sample(),
log_prob, entropy), the rollout storage torch.zeros((num_steps, num_envs) + obs_shape), next_obs / next_done
from torch.Tensor(...), learning-rate annealing through optimizer.param_groups[0]["lr"] = lrnow, GAE computed
backwards with nextnonterminal / lastgaelam, the flattened batch (b_obs = obs.reshape((-1,) + obs_shape)),
np.random.shuffle(b_inds) minibatches, logratio.exp(), approx_kl ((ratio - 1) - logratio).mean() and the
old_approx_kl, clipfracs, advantage normalisation, the clipped policy loss torch.max(pg_loss1, pg_loss2),
the clipped value loss, entropy bonus, nn.utils.clip_grad_norm_(agent.parameters(), max_grad_norm), target_kl
early stopping, and explained variance by np.var. --continuous: cleanrl's ppo_continuous_action.py agent
(actor_logstd = nn.Parameter(torch.zeros(1, n)), Normal(action_mean, action_std), log_prob(action).sum(1))."""
import argparse
import random
import time

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim
from torch.distributions.categorical import Categorical
from torch.distributions.normal import Normal


class ToyVecEnv:
    """num_envs copies of a 1-d reach task: observation (position, target, velocity, step/horizon); discrete
    actions push left / stay / push right, continuous actions are the push. Reward: -distance; auto-reset."""
    def __init__(self, num_envs, seed, continuous=False, horizon=20):
        self.n = num_envs
        self.rng = np.random.RandomState(seed)
        self.continuous = continuous
        self.horizon = horizon
        self.single_observation_space_shape = (4,)

    def reset(self):
        self.pos = self.rng.uniform(-1, 1, self.n)
        self.target = self.rng.uniform(-1, 1, self.n)
        self.vel = np.zeros(self.n)
        self.t = np.zeros(self.n)
        return self._obs()

    def _obs(self):
        return np.stack([self.pos, self.target, self.vel, self.t / self.horizon], 1).astype(np.float32)

    def step(self, action):
        push = np.clip(action[:, 0], -1, 1) if self.continuous else action.astype(np.float64) - 1.0
        self.vel = 0.8 * self.vel + 0.1 * push
        self.pos = self.pos + self.vel
        self.t += 1
        reward = -np.abs(self.pos - self.target)
        done = self.t >= self.horizon
        obs = self._obs()
        if done.any():
            k = int(done.sum())
            self.pos[done] = self.rng.uniform(-1, 1, k)
            self.target[done] = self.rng.uniform(-1, 1, k)
            self.vel[done] = 0
            self.t[done] = 0
            obs = self._obs()
        return obs, reward, done, {}


def layer_init(layer, std=np.sqrt(2), bias_const=0.0):
    torch.nn.init.orthogonal_(layer.weight, std)
    torch.nn.init.constant_(layer.bias, bias_const)
    return layer


class Agent(nn.Module):
    def __init__(self, obs_dim, n_actions):
        super().__init__()
        self.critic = nn.Sequential(
            layer_init(nn.Linear(obs_dim, 64)),
            nn.Tanh(),
            layer_init(nn.Linear(64, 64)),
            nn.Tanh(),
            layer_init(nn.Linear(64, 1), std=1.0),
        )
        self.actor = nn.Sequential(
            layer_init(nn.Linear(obs_dim, 64)),
            nn.Tanh(),
            layer_init(nn.Linear(64, 64)),
            nn.Tanh(),
            layer_init(nn.Linear(64, n_actions), std=0.01),
        )

    def get_value(self, x):
        return self.critic(x)

    def get_action_and_value(self, x, action=None):
        logits = self.actor(x)
        probs = Categorical(logits=logits)
        if action is None:
            action = probs.sample()
        return action, probs.log_prob(action), probs.entropy(), self.critic(x)


class ContinuousAgent(nn.Module):
    def __init__(self, obs_dim, act_dim):
        super().__init__()
        self.critic = nn.Sequential(
            layer_init(nn.Linear(obs_dim, 64)),
            nn.Tanh(),
            layer_init(nn.Linear(64, 64)),
            nn.Tanh(),
            layer_init(nn.Linear(64, 1), std=1.0),
        )
        self.actor_mean = nn.Sequential(
            layer_init(nn.Linear(obs_dim, 64)),
            nn.Tanh(),
            layer_init(nn.Linear(64, 64)),
            nn.Tanh(),
            layer_init(nn.Linear(64, act_dim), std=0.01),
        )
        self.actor_logstd = nn.Parameter(torch.zeros(1, act_dim))

    def get_value(self, x):
        return self.critic(x)

    def get_action_and_value(self, x, action=None):
        action_mean = self.actor_mean(x)
        action_logstd = self.actor_logstd.expand_as(action_mean)
        action_std = torch.exp(action_logstd)
        probs = Normal(action_mean, action_std)
        if action is None:
            action = probs.sample()
        return action, probs.log_prob(action).sum(1), probs.entropy().sum(1), self.critic(x)


def parse_args(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--torch-deterministic", type=lambda x: bool(int(x)), default=True)
    parser.add_argument("--total-timesteps", type=int, default=384)
    parser.add_argument("--learning-rate", type=float, default=2.5e-4)
    parser.add_argument("--num-envs", type=int, default=4)
    parser.add_argument("--num-steps", type=int, default=32)
    parser.add_argument("--anneal-lr", type=lambda x: bool(int(x)), default=True)
    parser.add_argument("--gamma", type=float, default=0.99)
    parser.add_argument("--gae-lambda", type=float, default=0.95)
    parser.add_argument("--num-minibatches", type=int, default=4)
    parser.add_argument("--update-epochs", type=int, default=2)
    parser.add_argument("--norm-adv", type=lambda x: bool(int(x)), default=True)
    parser.add_argument("--clip-coef", type=float, default=0.2)
    parser.add_argument("--clip-vloss", type=lambda x: bool(int(x)), default=True)
    parser.add_argument("--ent-coef", type=float, default=0.01)
    parser.add_argument("--vf-coef", type=float, default=0.5)
    parser.add_argument("--max-grad-norm", type=float, default=0.5)
    parser.add_argument("--target-kl", type=float, default=None)
    parser.add_argument("--continuous", action="store_true")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    args.batch_size = int(args.num_envs * args.num_steps)
    args.minibatch_size = int(args.batch_size // args.num_minibatches)
    return args


def main(argv=None):
    args = parse_args(argv)
    log = (lambda *a: None) if args.quiet else print

    # TRY NOT TO MODIFY: seeding
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.backends.cudnn.deterministic = args.torch_deterministic

    device = torch.device("cpu")
    envs = ToyVecEnv(args.num_envs, args.seed, continuous=args.continuous)
    obs_shape = envs.single_observation_space_shape
    if args.continuous:
        agent = ContinuousAgent(4, 1).to(device)
        action_shape = (1,)
    else:
        agent = Agent(4, 3).to(device)
        action_shape = ()
    initial_state = {k: v.clone() for k, v in agent.state_dict().items()}
    optimizer = optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)

    # ALGO Logic: Storage setup
    obs = torch.zeros((args.num_steps, args.num_envs) + obs_shape).to(device)
    actions = torch.zeros((args.num_steps, args.num_envs) + action_shape).to(device)
    logprobs = torch.zeros((args.num_steps, args.num_envs)).to(device)
    rewards = torch.zeros((args.num_steps, args.num_envs)).to(device)
    dones = torch.zeros((args.num_steps, args.num_envs)).to(device)
    values = torch.zeros((args.num_steps, args.num_envs)).to(device)

    # TRY NOT TO MODIFY: start the game
    global_step = 0
    start_time = time.time()
    next_obs = torch.Tensor(envs.reset()).to(device)
    next_done = torch.zeros(args.num_envs).to(device)
    num_updates = args.total_timesteps // args.batch_size

    step_losses, stats, returns_log = [], [], []
    for update in range(1, num_updates + 1):
        # Annealing the rate if instructed to do so.
        if args.anneal_lr:
            frac = 1.0 - (update - 1.0) / num_updates
            lrnow = frac * args.learning_rate
            optimizer.param_groups[0]["lr"] = lrnow

        for step in range(0, args.num_steps):
            global_step += 1 * args.num_envs
            obs[step] = next_obs
            dones[step] = next_done

            # ALGO LOGIC: action logic
            with torch.no_grad():
                action, logprob, _, value = agent.get_action_and_value(next_obs)
                values[step] = value.flatten()
            actions[step] = action
            logprobs[step] = logprob

            # TRY NOT TO MODIFY: execute the game and log data.
            next_obs, reward, done, info = envs.step(action.cpu().numpy())
            rewards[step] = torch.tensor(reward).to(device).view(-1)
            next_obs, next_done = torch.Tensor(next_obs).to(device), torch.Tensor(done).to(device)

        # bootstrap value if not done
        with torch.no_grad():
            next_value = agent.get_value(next_obs).reshape(1, -1)
            advantages = torch.zeros_like(rewards).to(device)
            lastgaelam = 0
            for t in reversed(range(args.num_steps)):
                if t == args.num_steps - 1:
                    nextnonterminal = 1.0 - next_done
                    nextvalues = next_value
                else:
                    nextnonterminal = 1.0 - dones[t + 1]
                    nextvalues = values[t + 1]
                delta = rewards[t] + args.gamma * nextvalues * nextnonterminal - values[t]
                advantages[t] = lastgaelam = delta + args.gamma * args.gae_lambda * nextnonterminal * lastgaelam
            returns = advantages + values
        returns_log.append(rewards.sum().item())

        # flatten the batch
        b_obs = obs.reshape((-1,) + obs_shape)
        b_logprobs = logprobs.reshape(-1)
        b_actions = actions.reshape((-1,) + action_shape)
        b_advantages = advantages.reshape(-1)
        b_returns = returns.reshape(-1)
        b_values = values.reshape(-1)

        # Optimizing the policy and value network
        b_inds = np.arange(args.batch_size)
        clipfracs = []
        for epoch in range(args.update_epochs):
            np.random.shuffle(b_inds)
            for start in range(0, args.batch_size, args.minibatch_size):
                end = start + args.minibatch_size
                mb_inds = b_inds[start:end]

                _, newlogprob, entropy, newvalue = agent.get_action_and_value(
                    b_obs[mb_inds], b_actions.long()[mb_inds] if not args.continuous else b_actions[mb_inds])
                logratio = newlogprob - b_logprobs[mb_inds]
                ratio = logratio.exp()

                with torch.no_grad():
                    # calculate approx_kl http://joschu.net/blog/kl-approx.html
                    old_approx_kl = (-logratio).mean()
                    approx_kl = ((ratio - 1) - logratio).mean()
                    clipfracs += [((ratio - 1.0).abs() > args.clip_coef).float().mean().item()]

                mb_advantages = b_advantages[mb_inds]
                if args.norm_adv:
                    mb_advantages = (mb_advantages - mb_advantages.mean()) / (mb_advantages.std() + 1e-8)

                # Policy loss
                pg_loss1 = -mb_advantages * ratio
                pg_loss2 = -mb_advantages * torch.clamp(ratio, 1 - args.clip_coef, 1 + args.clip_coef)
                pg_loss = torch.max(pg_loss1, pg_loss2).mean()

                # Value loss
                newvalue = newvalue.view(-1)
                if args.clip_vloss:
                    v_loss_unclipped = (newvalue - b_returns[mb_inds]) ** 2
                    v_clipped = b_values[mb_inds] + torch.clamp(
                        newvalue - b_values[mb_inds],
                        -args.clip_coef,
                        args.clip_coef,
                    )
                    v_loss_clipped = (v_clipped - b_returns[mb_inds]) ** 2
                    v_loss_max = torch.max(v_loss_unclipped, v_loss_clipped)
                    v_loss = 0.5 * v_loss_max.mean()
                else:
                    v_loss = 0.5 * ((newvalue - b_returns[mb_inds]) ** 2).mean()

                entropy_loss = entropy.mean()
                loss = pg_loss - args.ent_coef * entropy_loss + v_loss * args.vf_coef

                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
                optimizer.step()
                step_losses.append(loss.item())

            if args.target_kl is not None:
                if approx_kl > args.target_kl:
                    break

        y_pred, y_true = b_values.cpu().numpy(), b_returns.cpu().numpy()
        var_y = np.var(y_true)
        explained_var = np.nan if var_y == 0 else 1 - np.var(y_true - y_pred) / var_y
        stats.append([optimizer.param_groups[0]["lr"], v_loss.item(), pg_loss.item(), entropy_loss.item(),
                      old_approx_kl.item(), approx_kl.item(), np.mean(clipfracs), explained_var])
        log("SPS:", int(global_step / (time.time() - start_time)), stats[-1])

    return {"initial_state": initial_state, "step_losses": step_losses, "stats": stats,
            "returns": returns_log, "final_state": {k: v.clone() for k, v in agent.state_dict().items()}}


if __name__ == "__main__":
    main()
