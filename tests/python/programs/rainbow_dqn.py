"""higgsfield/RL-Adventure's DQN notebooks on a toy chain environment (no gym): the USE_CUDA / Variable lambda
(autograd.Variable(*args, **kwargs)), NoisyLinear (weight_mu / weight_sigma Parameters, register_buffer
('weight_epsilon', torch.FloatTensor(...)), reset_parameters with .data.uniform_ / fill_, _scale_noise's
x.sign().mul(x.abs().sqrt()), epsilon_out.ger(epsilon_in), F.linear with mu + sigma.mul(Variable(epsilon))),
a dueling head (value + advantage - advantage.mean()), act() with Variable(torch.FloatTensor(state).unsqueeze(0),
volatile=True) and q_value.max(1)[1].data[0], ReplayBuffer (deque, random.sample, np.concatenate) and the
prioritized NaivePrioritizedBuffer (probs ** alpha, np.random.choice with p=, importance weights),
compute_td_loss of Double DQN (next_q_state_values.gather(1, torch.max(next_q_values, 1)[1].unsqueeze(1))
.squeeze(1), (q_value - expected_q_value.detach()).pow(2) * weights, prios = loss + 1e-5,
update_priorities(indices, prios.data.cpu().numpy())), the target net's load_state_dict, and the
epsilon_by_frame exponential; --loss huber swaps in F.smooth_l1_loss(reduction='none') as later forks do."""
import argparse
import math
import random
from collections import deque

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim
import torch.autograd as autograd
import torch.nn.functional as F

USE_CUDA = torch.cuda.is_available()
Variable = lambda *args, **kwargs: autograd.Variable(*args, **kwargs).cuda() if USE_CUDA else autograd.Variable(*args, **kwargs)


class ChainEnv(object):
    """A chain of n states with one-hot observations: action 1 moves right (reward 1 at the end), action 0
    moves back to the start with a small reward."""
    def __init__(self, n=6, seed=0):
        self.n = n
        self.rng = np.random.RandomState(seed)

    def reset(self):
        self.pos = 0
        self.t = 0
        return self._obs()

    def _obs(self):
        o = np.zeros(self.n, np.float32)
        o[self.pos] = 1.0
        return o + 0.01 * self.rng.randn(self.n).astype(np.float32)

    def step(self, action):
        self.t += 1
        if self.rng.rand() < 0.1:
            action = 1 - action
        if action == 1:
            self.pos = min(self.pos + 1, self.n - 1)
            reward = 1.0 if self.pos == self.n - 1 else 0.0
        else:
            self.pos = 0
            reward = 0.05
        done = self.t >= 2 * self.n
        return self._obs(), reward, done, {}


class ReplayBuffer(object):
    def __init__(self, capacity):
        self.buffer = deque(maxlen=capacity)

    def push(self, state, action, reward, next_state, done):
        state = np.expand_dims(state, 0)
        next_state = np.expand_dims(next_state, 0)

        self.buffer.append((state, action, reward, next_state, done))

    def sample(self, batch_size):
        state, action, reward, next_state, done = zip(*random.sample(self.buffer, batch_size))
        return np.concatenate(state), action, reward, np.concatenate(next_state), done

    def __len__(self):
        return len(self.buffer)


class NaivePrioritizedBuffer(object):
    def __init__(self, capacity, prob_alpha=0.6):
        self.prob_alpha = prob_alpha
        self.capacity = capacity
        self.buffer = []
        self.pos = 0
        self.priorities = np.zeros((capacity,), dtype=np.float32)

    def push(self, state, action, reward, next_state, done):
        assert state.ndim == next_state.ndim
        state = np.expand_dims(state, 0)
        next_state = np.expand_dims(next_state, 0)

        max_prio = self.priorities.max() if self.buffer else 1.0

        if len(self.buffer) < self.capacity:
            self.buffer.append((state, action, reward, next_state, done))
        else:
            self.buffer[self.pos] = (state, action, reward, next_state, done)

        self.priorities[self.pos] = max_prio
        self.pos = (self.pos + 1) % self.capacity

    def sample(self, batch_size, beta=0.4):
        if len(self.buffer) == self.capacity:
            prios = self.priorities
        else:
            prios = self.priorities[:self.pos]

        probs = prios ** self.prob_alpha
        probs /= probs.sum()

        indices = np.random.choice(len(self.buffer), batch_size, p=probs)
        samples = [self.buffer[idx] for idx in indices]

        total = len(self.buffer)
        weights = (total * probs[indices]) ** (-beta)
        weights /= weights.max()
        weights = np.array(weights, dtype=np.float32)

        batch = list(zip(*samples))
        states = np.concatenate(batch[0])
        actions = batch[1]
        rewards = batch[2]
        next_states = np.concatenate(batch[3])
        dones = batch[4]

        return states, actions, rewards, next_states, dones, indices, weights

    def update_priorities(self, batch_indices, batch_priorities):
        for idx, prio in zip(batch_indices, batch_priorities):
            self.priorities[idx] = prio

    def __len__(self):
        return len(self.buffer)


class NoisyLinear(nn.Module):
    def __init__(self, in_features, out_features, std_init=0.4):
        super(NoisyLinear, self).__init__()

        self.in_features = in_features
        self.out_features = out_features
        self.std_init = std_init

        self.weight_mu = nn.Parameter(torch.FloatTensor(out_features, in_features))
        self.weight_sigma = nn.Parameter(torch.FloatTensor(out_features, in_features))
        self.register_buffer('weight_epsilon', torch.FloatTensor(out_features, in_features))

        self.bias_mu = nn.Parameter(torch.FloatTensor(out_features))
        self.bias_sigma = nn.Parameter(torch.FloatTensor(out_features))
        self.register_buffer('bias_epsilon', torch.FloatTensor(out_features))

        self.reset_parameters()
        self.reset_noise()

    def forward(self, x):
        if self.training:
            weight = self.weight_mu + self.weight_sigma.mul(Variable(self.weight_epsilon))
            bias = self.bias_mu + self.bias_sigma.mul(Variable(self.bias_epsilon))
        else:
            weight = self.weight_mu
            bias = self.bias_mu

        return F.linear(x, weight, bias)

    def reset_parameters(self):
        mu_range = 1 / math.sqrt(self.weight_mu.size(1))

        self.weight_mu.data.uniform_(-mu_range, mu_range)
        self.weight_sigma.data.fill_(self.std_init / math.sqrt(self.weight_sigma.size(1)))

        self.bias_mu.data.uniform_(-mu_range, mu_range)
        self.bias_sigma.data.fill_(self.std_init / math.sqrt(self.bias_sigma.size(0)))

    def reset_noise(self):
        epsilon_in = self._scale_noise(self.in_features)
        epsilon_out = self._scale_noise(self.out_features)

        self.weight_epsilon.copy_(epsilon_out.ger(epsilon_in))
        self.bias_epsilon.copy_(self._scale_noise(self.out_features))

    def _scale_noise(self, size):
        x = torch.randn(size)
        x = x.sign().mul(x.abs().sqrt())
        return x


class NoisyDuelingDQN(nn.Module):
    def __init__(self, num_inputs, num_actions, noisy=True):
        super(NoisyDuelingDQN, self).__init__()
        self.num_actions = num_actions
        self.noisy = noisy
        self.feature = nn.Sequential(
            nn.Linear(num_inputs, 32),
            nn.ReLU()
        )
        if noisy:
            self.advantage1 = NoisyLinear(32, 32)
            self.advantage2 = NoisyLinear(32, num_actions)
            self.value1 = NoisyLinear(32, 32)
            self.value2 = NoisyLinear(32, 1)
        else:
            self.advantage1, self.advantage2 = nn.Linear(32, 32), nn.Linear(32, num_actions)
            self.value1, self.value2 = nn.Linear(32, 32), nn.Linear(32, 1)

    def forward(self, x):
        x = self.feature(x)
        advantage = self.advantage2(F.relu(self.advantage1(x)))
        value = self.value2(F.relu(self.value1(x)))
        return value + advantage - advantage.mean()

    def act(self, state, epsilon=0.0):
        if self.noisy or random.random() > epsilon:
            state = Variable(torch.FloatTensor(state).unsqueeze(0), volatile=True)
            q_value = self.forward(state)
            action = q_value.max(1)[1].data[0]
            action = int(action)
        else:
            action = random.randrange(self.num_actions)
        return action

    def reset_noise(self):
        if self.noisy:
            self.advantage1.reset_noise()
            self.advantage2.reset_noise()
            self.value1.reset_noise()
            self.value2.reset_noise()


def update_target(current_model, target_model):
    target_model.load_state_dict(current_model.state_dict())


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument('--num-frames', type=int, default=120)
    parser.add_argument('--batch-size', type=int, default=16)
    parser.add_argument('--gamma', type=float, default=0.99)
    parser.add_argument('--buffer', default='prioritized', choices=['prioritized', 'uniform'])
    parser.add_argument('--no-noisy', action='store_true')
    parser.add_argument('--loss', default='mse', choices=['mse', 'huber'])
    parser.add_argument('--quiet', action='store_true')
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print

    random.seed(0)
    np.random.seed(0)
    torch.manual_seed(0)
    env = ChainEnv(6, seed=1)
    current_model = NoisyDuelingDQN(6, 2, noisy=not args.no_noisy)
    target_model = NoisyDuelingDQN(6, 2, noisy=not args.no_noisy)
    initial_state = {k: v.clone() for k, v in current_model.state_dict().items()}
    optimizer = optim.Adam(current_model.parameters(), lr=1e-3)
    update_target(current_model, target_model)
    prioritized = args.buffer == 'prioritized'
    replay_buffer = NaivePrioritizedBuffer(100) if prioritized else ReplayBuffer(100)

    epsilon_start, epsilon_final, epsilon_decay = 1.0, 0.01, 50
    epsilon_by_frame = lambda frame_idx: epsilon_final + (epsilon_start - epsilon_final) * math.exp(
        -1. * frame_idx / epsilon_decay)
    beta_start, beta_frames = 0.4, 100
    beta_by_frame = lambda frame_idx: min(1.0, beta_start + frame_idx * (1.0 - beta_start) / beta_frames)

    def compute_td_loss(batch_size, beta):
        if prioritized:
            state, action, reward, next_state, done, indices, weights = replay_buffer.sample(batch_size, beta)
        else:
            state, action, reward, next_state, done = replay_buffer.sample(batch_size)
            weights = np.ones(batch_size, np.float32)

        state = Variable(torch.FloatTensor(np.float32(state)))
        next_state = Variable(torch.FloatTensor(np.float32(next_state)))
        action = Variable(torch.LongTensor(action))
        reward = Variable(torch.FloatTensor(reward))
        done = Variable(torch.FloatTensor(done))
        weights = Variable(torch.FloatTensor(weights))

        q_values = current_model(state)
        next_q_values = current_model(next_state)
        next_q_state_values = target_model(next_state)

        q_value = q_values.gather(1, action.unsqueeze(1)).squeeze(1)
        next_q_value = next_q_state_values.gather(1, torch.max(next_q_values, 1)[1].unsqueeze(1)).squeeze(1)
        expected_q_value = reward + args.gamma * next_q_value * (1 - done)

        if args.loss == 'huber':
            loss = F.smooth_l1_loss(q_value, expected_q_value.detach(), reduction='none') * weights
        else:
            loss = (q_value - expected_q_value.detach()).pow(2) * weights
        prios = loss + 1e-5
        loss = loss.mean()

        optimizer.zero_grad()
        loss.backward()
        if prioritized:
            replay_buffer.update_priorities(indices, prios.data.cpu().numpy())
        optimizer.step()
        current_model.reset_noise()
        target_model.reset_noise()
        return loss

    step_losses, all_rewards, actions = [], [], []
    episode_reward = 0
    state = env.reset()
    for frame_idx in range(1, args.num_frames + 1):
        epsilon = epsilon_by_frame(frame_idx)
        action = current_model.act(state, epsilon)
        actions.append(action)

        next_state, reward, done, _ = env.step(action)
        replay_buffer.push(state, action, reward, next_state, done)

        state = next_state
        episode_reward += reward

        if done:
            state = env.reset()
            all_rewards.append(episode_reward)
            episode_reward = 0

        if len(replay_buffer) > args.batch_size:
            beta = beta_by_frame(frame_idx)
            loss = compute_td_loss(args.batch_size, beta)
            step_losses.append(loss.item())

        if frame_idx % 20 == 0:
            update_target(current_model, target_model)
            log(frame_idx, np.mean(all_rewards[-5:]) if all_rewards else 0.0)

    out = {"initial_state": initial_state, "step_losses": step_losses, "rewards": all_rewards,
           "actions": actions, "final_state": {k: v.clone() for k, v in current_model.state_dict().items()}}
    if prioritized:
        out["priorities"] = replay_buffer.priorities.copy()
    return out


if __name__ == "__main__":
    main()
