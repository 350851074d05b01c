"""sfujim/TD3 (TD3.py, DDPG.py, OurDDPG.py, utils.py ReplayBuffer, main.py's loop) in plain torch on a small
point-mass environment written in NumPy: Actor with self.max_action * torch.tanh(self.l3(a)), twin-Q Critic
(torch.cat([state, action], 1), Q1 only for the actor loss), copy.deepcopy'd targets, ReplayBuffer of NumPy
arrays sampled by np.random.randint and turned into torch.FloatTensor(...).to(device), target policy smoothing
by (torch.randn_like(action) * self.policy_noise).clamp(-self.noise_clip, self.noise_clip) and
.clamp(-self.max_action, self.max_action), torch.min(target_Q1, target_Q2), target_Q = reward + not_done *
self.discount * target_Q under torch.no_grad(), F.mse_loss(current_Q1, target_Q) + F.mse_loss(current_Q2,
target_Q), delayed policy updates, soft updates target_param.data.copy_(self.tau * param.data + (1 - self.tau) *
target_param.data), select_action by torch.FloatTensor(state.reshape(1, -1)) and .cpu().data.numpy().flatten(),
save / load of the actor / critic / optimizer state_dicts (torch.save to filename + "_critic"), and DDPG's
single critic with Adam(weight_decay) / batch-norm-free layers."""
import argparse
import copy
import os
import tempfile

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class ReplayBuffer(object):
    def __init__(self, state_dim, action_dim, max_size=int(1e6)):
        self.max_size = max_size
        self.ptr = 0
        self.size = 0
        self.state = np.zeros((max_size, state_dim))
        self.action = np.zeros((max_size, action_dim))
        self.next_state = np.zeros((max_size, state_dim))
        self.reward = np.zeros((max_size, 1))
        self.not_done = np.zeros((max_size, 1))
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    def add(self, state, action, next_state, reward, done):
        self.state[self.ptr] = state
        self.action[self.ptr] = action
        self.next_state[self.ptr] = next_state
        self.reward[self.ptr] = reward
        self.not_done[self.ptr] = 1. - done
        self.ptr = (self.ptr + 1) % self.max_size
        self.size = min(self.size + 1, self.max_size)

    def sample(self, batch_size):
        ind = np.random.randint(0, self.size, size=batch_size)
        return (
            torch.FloatTensor(self.state[ind]).to(self.device),
            torch.FloatTensor(self.action[ind]).to(self.device),
            torch.FloatTensor(self.next_state[ind]).to(self.device),
            torch.FloatTensor(self.reward[ind]).to(self.device),
            torch.FloatTensor(self.not_done[ind]).to(self.device)
        )


class Actor(nn.Module):
    def __init__(self, state_dim, action_dim, max_action):
        super(Actor, self).__init__()
        self.l1 = nn.Linear(state_dim, 32)
        self.l2 = nn.Linear(32, 32)
        self.l3 = nn.Linear(32, action_dim)
        self.max_action = max_action

    def forward(self, state):
        a = F.relu(self.l1(state))
        a = F.relu(self.l2(a))
        return self.max_action * torch.tanh(self.l3(a))


class Critic(nn.Module):
    def __init__(self, state_dim, action_dim):
        super(Critic, self).__init__()
        self.l1 = nn.Linear(state_dim + action_dim, 32)
        self.l2 = nn.Linear(32, 32)
        self.l3 = nn.Linear(32, 1)
        self.l4 = nn.Linear(state_dim + action_dim, 32)
        self.l5 = nn.Linear(32, 32)
        self.l6 = nn.Linear(32, 1)

    def forward(self, state, action):
        sa = torch.cat([state, action], 1)
        q1 = F.relu(self.l1(sa))
        q1 = F.relu(self.l2(q1))
        q1 = self.l3(q1)
        q2 = F.relu(self.l4(sa))
        q2 = F.relu(self.l5(q2))
        q2 = self.l6(q2)
        return q1, q2

    def Q1(self, state, action):
        sa = torch.cat([state, action], 1)
        q1 = F.relu(self.l1(sa))
        q1 = F.relu(self.l2(q1))
        q1 = self.l3(q1)
        return q1


class TD3(object):
    def __init__(self, state_dim, action_dim, max_action, discount=0.99, tau=0.005, policy_noise=0.2,
                 noise_clip=0.5, policy_freq=2):
        self.actor = Actor(state_dim, action_dim, max_action).to(device)
        self.actor_target = copy.deepcopy(self.actor)
        self.actor_optimizer = torch.optim.Adam(self.actor.parameters(), lr=3e-4)
        self.critic = Critic(state_dim, action_dim).to(device)
        self.critic_target = copy.deepcopy(self.critic)
        self.critic_optimizer = torch.optim.Adam(self.critic.parameters(), lr=3e-4)
        self.max_action = max_action
        self.discount = discount
        self.tau = tau
        self.policy_noise = policy_noise
        self.noise_clip = noise_clip
        self.policy_freq = policy_freq
        self.total_it = 0

    def select_action(self, state):
        state = torch.FloatTensor(state.reshape(1, -1)).to(device)
        return self.actor(state).cpu().data.numpy().flatten()

    def train(self, replay_buffer, batch_size=32):
        self.total_it += 1
        state, action, next_state, reward, not_done = replay_buffer.sample(batch_size)
        with torch.no_grad():
            noise = (torch.randn_like(action) * self.policy_noise).clamp(-self.noise_clip, self.noise_clip)
            next_action = (self.actor_target(next_state) + noise).clamp(-self.max_action, self.max_action)
            target_Q1, target_Q2 = self.critic_target(next_state, next_action)
            target_Q = torch.min(target_Q1, target_Q2)
            target_Q = reward + not_done * self.discount * target_Q
        current_Q1, current_Q2 = self.critic(state, action)
        critic_loss = F.mse_loss(current_Q1, target_Q) + F.mse_loss(current_Q2, target_Q)
        self.critic_optimizer.zero_grad()
        critic_loss.backward()
        self.critic_optimizer.step()
        actor_loss = None
        if self.total_it % self.policy_freq == 0:
            actor_loss = -self.critic.Q1(state, self.actor(state)).mean()
            self.actor_optimizer.zero_grad()
            actor_loss.backward()
            self.actor_optimizer.step()
            for param, target_param in zip(self.critic.parameters(), self.critic_target.parameters()):
                target_param.data.copy_(self.tau * param.data + (1 - self.tau) * target_param.data)
            for param, target_param in zip(self.actor.parameters(), self.actor_target.parameters()):
                target_param.data.copy_(self.tau * param.data + (1 - self.tau) * target_param.data)
            actor_loss = actor_loss.item()
        return critic_loss.item(), actor_loss

    def save(self, filename):
        torch.save(self.critic.state_dict(), filename + "_critic")
        torch.save(self.critic_optimizer.state_dict(), filename + "_critic_optimizer")
        torch.save(self.actor.state_dict(), filename + "_actor")
        torch.save(self.actor_optimizer.state_dict(), filename + "_actor_optimizer")

    def load(self, filename):
        self.critic.load_state_dict(torch.load(filename + "_critic"))
        self.critic_optimizer.load_state_dict(torch.load(filename + "_critic_optimizer"))
        self.critic_target = copy.deepcopy(self.critic)
        self.actor.load_state_dict(torch.load(filename + "_actor"))
        self.actor_optimizer.load_state_dict(torch.load(filename + "_actor_optimizer"))
        self.actor_target = copy.deepcopy(self.actor)


class DDPG(TD3):
    def __init__(self, state_dim, action_dim, max_action, discount=0.99, tau=0.005):
        super().__init__(state_dim, action_dim, max_action, discount, tau)
        self.critic_optimizer = torch.optim.Adam(self.critic.parameters(), lr=1e-3, weight_decay=1e-2)

    def train(self, replay_buffer, batch_size=32):
        state, action, next_state, reward, not_done = replay_buffer.sample(batch_size)
        target_Q = self.critic_target.Q1(next_state, self.actor_target(next_state))
        target_Q = reward + (not_done * self.discount * target_Q).detach()
        current_Q = self.critic.Q1(state, action)
        critic_loss = F.mse_loss(current_Q, target_Q)
        self.critic_optimizer.zero_grad()
        critic_loss.backward()
        self.critic_optimizer.step()
        actor_loss = -self.critic.Q1(state, self.actor(state)).mean()
        self.actor_optimizer.zero_grad()
        actor_loss.backward()
        self.actor_optimizer.step()
        for param, target_param in zip(self.critic.parameters(), self.critic_target.parameters()):
            target_param.data.copy_(self.tau * param.data + (1 - self.tau) * target_param.data)
        for param, target_param in zip(self.actor.parameters(), self.actor_target.parameters()):
            target_param.data.copy_(self.tau * param.data + (1 - self.tau) * target_param.data)
        return critic_loss.item(), actor_loss.item()


class PointMass:
    """Move a point to the origin: state (x, y, vx, vy), action a force in [-1, 1]^2."""

    def __init__(self, seed):
        self.rng = np.random.RandomState(seed)

    def reset(self):
        self.s = np.concatenate([self.rng.uniform(-1, 1, 2), np.zeros(2)])
        self.t = 0
        return self.s.copy()

    def step(self, a):
        a = np.clip(a, -1, 1)
        self.s[2:] = 0.9 * self.s[2:] + 0.1 * a
        self.s[:2] = self.s[:2] + 0.1 * self.s[2:]
        self.t += 1
        reward = -np.linalg.norm(self.s[:2]) - 0.01 * np.square(a).sum()
        done = self.t >= 20
        return self.s.copy(), reward, float(done)


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--policy", default="TD3")
    parser.add_argument("--seed", default=0, type=int)
    parser.add_argument("--start_timesteps", default=64, type=int)
    parser.add_argument("--max_timesteps", default=120, type=int)
    parser.add_argument("--expl_noise", default=0.1, type=float)
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print
    env = PointMass(args.seed)
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)
    state_dim, action_dim, max_action = 4, 2, 1.0
    if args.policy == "TD3":
        policy = TD3(state_dim, action_dim, max_action, policy_noise=0.2 * max_action, noise_clip=0.5 * max_action)
    else:
        policy = DDPG(state_dim, action_dim, max_action)
    initial_state = {"actor." + k: v.clone() for k, v in policy.actor.state_dict().items()}
    initial_state.update({"critic." + k: v.clone() for k, v in policy.critic.state_dict().items()})
    replay_buffer = ReplayBuffer(state_dim, action_dim, max_size=1000)
    state, done = env.reset(), False
    episode_reward, rewards, step_losses, actor_losses = 0, [], [], []
    for t in range(args.max_timesteps):
        if t < args.start_timesteps:
            action = np.random.uniform(-1, 1, action_dim)
        else:
            action = (policy.select_action(np.array(state))
                      + np.random.normal(0, max_action * args.expl_noise, size=action_dim)
                      ).clip(-max_action, max_action)
        next_state, reward, done = env.step(action)
        replay_buffer.add(state, action, next_state, reward, done)
        state = next_state
        episode_reward += reward
        if t >= args.start_timesteps:
            c, a = policy.train(replay_buffer, 32)
            step_losses.append(c)
            if a is not None:
                actor_losses.append(a)
        if done:
            rewards.append(episode_reward)
            log(f"Total T: {t + 1} Reward: {episode_reward:.3f}")
            state, done = env.reset(), False
            episode_reward = 0
    with tempfile.TemporaryDirectory() as d:
        filename = os.path.join(d, f"{args.policy}_PointMass_{args.seed}")
        policy.save(filename)
        twin = TD3(state_dim, action_dim, max_action) if args.policy == "TD3" else DDPG(state_dim, action_dim,
                                                                                        max_action)
        twin.load(filename)
    probe = np.array([0.5, -0.5, 0.0, 0.1])
    return {"initial_state": initial_state, "step_losses": step_losses, "actor_losses": actor_losses,
            "rewards": rewards, "action": policy.select_action(probe), "twin_action": twin.select_action(probe),
            "twin_opt_step": twin.critic_optimizer.state_dict()["state"][0]["step"]}


if __name__ == "__main__":
    main()
