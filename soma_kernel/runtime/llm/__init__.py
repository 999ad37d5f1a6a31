"""Real models behind think(): configuration, providers, tool rounds, cassettes.

One module per concern:
- `config`    which model a cell talks to (soma.toml `[agent]` / `[models.NAME]`,
              `SOMA_LLM_*`, the key lookup order, `${ENV}` expansion);
- `schema`    the JSON schema offered for each face `tool`;
- `providers` the two wire formats (Anthropic Messages, OpenAI Chat
              Completions) through the official SDKs, imported on first use;
- `transport` retries with back-off, the timeout that covers them, rpm/tpm;
- `rounds`    the tool-round loop of one think() call;
- `cassette`  recording and replaying provider exchanges;
- `redact`    keeping keys out of every text shown.

Nothing here is imported when the kernel starts: the agent imports this
package the first time a think() call needs a real model.
"""
