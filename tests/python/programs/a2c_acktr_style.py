"""ikostrikov/pytorch-a2c-ppo-acktr-gail's building blocks as written: FixedCategorical / FixedNormal /
FixedBernoulli subclasses of torch.distributions (sample().unsqueeze(-1), log_probs summing over the last dim,
mode() by argmax / mean, entropy().sum(-1)), the init(module, weight_init, bias_init, gain) helper with
nn.init.orthogonal_ / constant_ and nn.init.calculate_gain('relu'), AddBias, DiagGaussian with a learned log-std,
MLPBase with a GRU-free actor / critic, RolloutStorage (obs / rewards / value_preds / returns / masks tensors,
insert, after_update, compute_returns with GAE and use_proper_time_limits' bad_masks), the A2C_ACKTR update
(RMSprop(lr, eps, alpha), value_loss_coef, entropy_coef, clip_grad_norm_) and the PPO update with
BatchSampler(SubsetRandomSampler(range(...)), mini_batch_size, drop_last=True) minibatches and the clipped value
loss; on a small deterministic-physics toy environment written with torch ops."""
import argparse

import torch
import torch.nn as nn
import torch.optim as optim
from torch.utils.data.sampler import BatchSampler, SubsetRandomSampler


class FixedCategorical(torch.distributions.Categorical):
    def sample(self):
        return super().sample().unsqueeze(-1)

    def log_probs(self, actions):
        return (super().log_prob(actions.squeeze(-1)).view(actions.size(0), -1).sum(-1).unsqueeze(-1))

    def mode(self):
        return self.probs.argmax(dim=-1, keepdim=True)


class FixedNormal(torch.distributions.Normal):
    def log_probs(self, actions):
        return super().log_prob(actions).sum(-1, keepdim=True)

    def entropy(self):
        return super().entropy().sum(-1)

    def mode(self):
        return self.mean


def init(module, weight_init, bias_init, gain=1):
    weight_init(module.weight.data, gain=gain)
    bias_init(module.bias.data)
    return module


class AddBias(nn.Module):
    def __init__(self, bias):
        super(AddBias, self).__init__()
        self._bias = nn.Parameter(bias.unsqueeze(1))

    def forward(self, x):
        if x.dim() == 2:
            bias = self._bias.t().view(1, -1)
        else:
            bias = self._bias.t().view(1, -1, 1, 1)
        return x + bias


class Categorical(nn.Module):
    def __init__(self, num_inputs, num_outputs):
        super(Categorical, self).__init__()
        init_ = lambda m: init(m, nn.init.orthogonal_, lambda x: nn.init.constant_(x, 0), gain=0.01)
        self.linear = init_(nn.Linear(num_inputs, num_outputs))

    def forward(self, x):
        x = self.linear(x)
        return FixedCategorical(logits=x)


class DiagGaussian(nn.Module):
    def __init__(self, num_inputs, num_outputs):
        super(DiagGaussian, self).__init__()
        init_ = lambda m: init(m, nn.init.orthogonal_, lambda x: nn.init.constant_(x, 0))
        self.fc_mean = init_(nn.Linear(num_inputs, num_outputs))
        self.logstd = AddBias(torch.zeros(num_outputs))

    def forward(self, x):
        action_mean = self.fc_mean(x)
        zeros = torch.zeros(action_mean.size())
        action_logstd = self.logstd(zeros)
        return FixedNormal(action_mean, action_logstd.exp())


class MLPBase(nn.Module):
    def __init__(self, num_inputs, hidden_size=32):
        super(MLPBase, self).__init__()
        init_ = lambda m: init(m, nn.init.orthogonal_, lambda x: nn.init.constant_(x, 0), gain=2 ** 0.5)
        self.actor = nn.Sequential(init_(nn.Linear(num_inputs, hidden_size)), nn.Tanh(),
                                   init_(nn.Linear(hidden_size, hidden_size)), nn.Tanh())
        self.critic = nn.Sequential(init_(nn.Linear(num_inputs, hidden_size)), nn.Tanh(),
                                    init_(nn.Linear(hidden_size, hidden_size)), nn.Tanh())
        self.critic_linear = init_(nn.Linear(hidden_size, 1))
        self.output_size = hidden_size

    def forward(self, inputs):
        return self.critic_linear(self.critic(inputs)), self.actor(inputs)


class Policy(nn.Module):
    def __init__(self, obs_dim, action_space):
        super(Policy, self).__init__()
        self.base = MLPBase(obs_dim)
        kind, n = action_space
        self.dist = Categorical(self.base.output_size, n) if kind == "discrete" else DiagGaussian(self.base.output_size, n)

    def act(self, inputs, deterministic=False):
        value, actor_features = self.base(inputs)
        dist = self.dist(actor_features)
        action = dist.mode() if deterministic else dist.sample()
        action_log_probs = dist.log_probs(action)
        return value, action, action_log_probs

    def get_value(self, inputs):
        return self.base(inputs)[0]

    def evaluate_actions(self, inputs, action):
        value, actor_features = self.base(inputs)
        dist = self.dist(actor_features)
        action_log_probs = dist.log_probs(action)
        dist_entropy = dist.entropy().mean()
        return value, action_log_probs, dist_entropy


class RolloutStorage(object):
    def __init__(self, num_steps, num_processes, obs_dim, action_shape, discrete):
        self.obs = torch.zeros(num_steps + 1, num_processes, obs_dim)
        self.rewards = torch.zeros(num_steps, num_processes, 1)
        self.value_preds = torch.zeros(num_steps + 1, num_processes, 1)
        self.returns = torch.zeros(num_steps + 1, num_processes, 1)
        self.action_log_probs = torch.zeros(num_steps, num_processes, 1)
        self.actions = torch.zeros(num_steps, num_processes, action_shape)
        if discrete:
            self.actions = self.actions.long()
        self.masks = torch.ones(num_steps + 1, num_processes, 1)
        self.bad_masks = torch.ones(num_steps + 1, num_processes, 1)
        self.num_steps = num_steps
        self.step = 0

    def insert(self, obs, actions, action_log_probs, value_preds, rewards, masks, bad_masks):
        self.obs[self.step + 1].copy_(obs)
        self.actions[self.step].copy_(actions)
        self.action_log_probs[self.step].copy_(action_log_probs)
        self.value_preds[self.step].copy_(value_preds)
        self.rewards[self.step].copy_(rewards)
        self.masks[self.step + 1].copy_(masks)
        self.bad_masks[self.step + 1].copy_(bad_masks)
        self.step = (self.step + 1) % self.num_steps

    def after_update(self):
        self.obs[0].copy_(self.obs[-1])
        self.masks[0].copy_(self.masks[-1])
        self.bad_masks[0].copy_(self.bad_masks[-1])

    def compute_returns(self, next_value, use_gae, gamma, gae_lambda, use_proper_time_limits=True):
        if use_proper_time_limits:
            if use_gae:
                self.value_preds[-1] = next_value
                gae = 0
                for step in reversed(range(self.rewards.size(0))):
                    delta = self.rewards[step] + gamma * self.value_preds[step + 1] * self.masks[step + 1] - \
                        self.value_preds[step]
                    gae = delta + gamma * gae_lambda * self.masks[step + 1] * gae
                    gae = gae * self.bad_masks[step + 1]
                    self.returns[step] = gae + self.value_preds[step]
            else:
                self.returns[-1] = next_value
                for step in reversed(range(self.rewards.size(0))):
                    self.returns[step] = (self.returns[step + 1] * gamma * self.masks[step + 1] + self.rewards[step]) \
                        * self.bad_masks[step + 1] + (1 - self.bad_masks[step + 1]) * self.value_preds[step]

    def feed_forward_generator(self, advantages, num_mini_batch):
        num_steps, num_processes = self.rewards.size()[0:2]
        batch_size = num_processes * num_steps
        mini_batch_size = batch_size // num_mini_batch
        sampler = BatchSampler(SubsetRandomSampler(range(batch_size)), mini_batch_size, drop_last=True)
        for indices in sampler:
            obs_batch = self.obs[:-1].view(-1, *self.obs.size()[2:])[indices]
            actions_batch = self.actions.view(-1, self.actions.size(-1))[indices]
            value_preds_batch = self.value_preds[:-1].view(-1, 1)[indices]
            return_batch = self.returns[:-1].view(-1, 1)[indices]
            old_action_log_probs_batch = self.action_log_probs.view(-1, 1)[indices]
            adv_targ = advantages.view(-1, 1)[indices]
            yield obs_batch, actions_batch, value_preds_batch, return_batch, old_action_log_probs_batch, adv_targ


class ToyEnv:
    """A point on a line (discrete: push left / stay / right) or in the plane (continuous), rewarded for nearing 0."""

    def __init__(self, n, discrete):
        self.n, self.discrete = n, discrete
        self.t = torch.zeros(n)

    def reset(self):
        self.state = torch.linspace(-1, 1, self.n).unsqueeze(1).repeat(1, 4) * torch.tensor([1., 0.5, -0.5, 0.2])
        self.t = torch.zeros(self.n)
        return self.state.clone()

    def step(self, action):
        move = (action.float() - 1) * 0.1 if self.discrete else action.clamp(-1, 1) * 0.1
        self.state[:, :move.size(1)] += move
        reward = -self.state.pow(2).sum(1, keepdim=True)
        self.t += 1
        done = self.t >= 6
        timeout = done.clone()
        if done.any():
            fresh = self.reset()
            self.state = torch.where(done.unsqueeze(1), fresh, self.state)
            self.t = torch.where(done, torch.zeros_like(self.t), self.t)
        masks = torch.FloatTensor([[0.0] if d else [1.0] for d in done])
        bad_masks = torch.FloatTensor([[0.0] if t else [1.0] for t in timeout])
        return self.state.clone(), reward, masks, bad_masks


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--algo", default="a2c", choices=["a2c", "ppo"])
    parser.add_argument("--continuous", action="store_true")
    parser.add_argument("--updates", type=int, default=8)
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print
    torch.manual_seed(1)
    num_processes, num_steps = 4, 5
    discrete = not args.continuous
    env = ToyEnv(num_processes, discrete)
    actor_critic = Policy(4, ("discrete", 3) if discrete else ("box", 2))
    initial_state = {k: v.clone() for k, v in actor_critic.state_dict().items()}
    if args.algo == "a2c":
        optimizer = optim.RMSprop(actor_critic.parameters(), 7e-4 * 10, eps=1e-5, alpha=0.99)
    else:
        optimizer = optim.Adam(actor_critic.parameters(), lr=3e-3, eps=1e-5)
    rollouts = RolloutStorage(num_steps, num_processes, 4, 1 if discrete else 2, discrete)
    rollouts.obs[0].copy_(env.reset())
    step_losses, entropies = [], []
    for j in range(args.updates):
        for step in range(num_steps):
            with torch.no_grad():
                value, action, action_log_prob = actor_critic.act(rollouts.obs[step])
            obs, reward, masks, bad_masks = env.step(action if not discrete else action)
            rollouts.insert(obs, action, action_log_prob, value, reward, masks, bad_masks)
        with torch.no_grad():
            next_value = actor_critic.get_value(rollouts.obs[-1]).detach()
        rollouts.compute_returns(next_value, True, 0.99, 0.95)
        if args.algo == "a2c":
            obs_shape = rollouts.obs.size()[2:]
            action_shape = rollouts.actions.size()[-1]
            values, action_log_probs, dist_entropy = actor_critic.evaluate_actions(
                rollouts.obs[:-1].view(-1, *obs_shape), rollouts.actions.view(-1, action_shape))
            values = values.view(num_steps, num_processes, 1)
            action_log_probs = action_log_probs.view(num_steps, num_processes, 1)
            advantages = rollouts.returns[:-1] - values
            value_loss = advantages.pow(2).mean()
            action_loss = -(advantages.detach() * action_log_probs).mean()
            optimizer.zero_grad()
            (value_loss * 0.5 + action_loss - dist_entropy * 0.01).backward()
            nn.utils.clip_grad_norm_(actor_critic.parameters(), 0.5)
            optimizer.step()
            step_losses.append(value_loss.item())
            entropies.append(dist_entropy.item())
        else:
            advantages = rollouts.returns[:-1] - rollouts.value_preds[:-1]
            advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-5)
            for e in range(2):
                for sample in rollouts.feed_forward_generator(advantages, 2):
                    obs_batch, actions_batch, value_preds_batch, return_batch, old_action_log_probs_batch, adv_targ = \
                        sample
                    values, action_log_probs, dist_entropy = actor_critic.evaluate_actions(obs_batch, actions_batch)
                    ratio = torch.exp(action_log_probs - old_action_log_probs_batch)
                    surr1 = ratio * adv_targ
                    surr2 = torch.clamp(ratio, 1.0 - 0.2, 1.0 + 0.2) * adv_targ
                    action_loss = -torch.min(surr1, surr2).mean()
                    value_pred_clipped = value_preds_batch + (values - value_preds_batch).clamp(-0.2, 0.2)
                    value_losses = (values - return_batch).pow(2)
                    value_losses_clipped = (value_pred_clipped - return_batch).pow(2)
                    value_loss = 0.5 * torch.max(value_losses, value_losses_clipped).mean()
                    optimizer.zero_grad()
                    (value_loss * 0.5 + action_loss - dist_entropy * 0.01).backward()
                    nn.utils.clip_grad_norm_(actor_critic.parameters(), 0.5)
                    optimizer.step()
                    step_losses.append(value_loss.item())
                    entropies.append(dist_entropy.item())
        rollouts.after_update()
        log(f"update {j} value loss {step_losses[-1]:.4f} entropy {entropies[-1]:.4f}")
    with torch.no_grad():
        _, greedy, greedy_lp = actor_critic.act(rollouts.obs[0], deterministic=True)
    return {"initial_state": initial_state, "step_losses": step_losses, "entropies": entropies,
            "returns": rollouts.returns.clone(), "greedy": greedy, "greedy_lp": greedy_lp,
            "rewards": rollouts.rewards.clone()}


if __name__ == "__main__":
    main()
