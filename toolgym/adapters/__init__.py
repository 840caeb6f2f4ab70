"""Adapters for RL frameworks, each built on the environment API (`toolgym.env`) and importing its
framework lazily, so that the core keeps its small dependency set:

- `toolgym.adapters.openenv`: an OpenEnv (`openenv-core`) server, `pip install -e ".[openenv]"`;
- the verifiers environment lives in its own distribution, `environments/toolgym_verifiers/`
  (verifiers pins an older MCP SDK than toolgym; see its README).
"""
