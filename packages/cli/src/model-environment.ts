/** Every environment variable the model choice reads, with what it does (printed by `--help`). */
export const MODEL_ENVIRONMENT: Record<string, string> = {
  OPENAI_API_KEY: 'key for the OpenAI-compatible provider (OpenAI, or any server at --base-url)',
  OPENAI_BASE_URL: 'OpenAI-compatible endpoint when --base-url and cordage.yml name none',
  DEEPSEEK_API_KEY: "DeepSeek's key; alone, it selects DeepSeek's endpoint (model deepseek-flash)",
  ANTHROPIC_API_KEY: "Anthropic's key; alone (no OpenAI or DeepSeek key), it selects the Anthropic provider",
  ANTHROPIC_AUTH_TOKEN: 'a bearer token for the Anthropic provider instead of a key',
  ANTHROPIC_BASE_URL: 'Anthropic-format endpoint (e.g. https://api.deepseek.com/anthropic)',
  CORDAGE_PROVIDER: 'openai or anthropic, when --provider and cordage.yml name none',
  CORDAGE_MODEL: 'model name when --model and cordage.yml name none',
  CORDAGE_DEBUG: 'print stack traces of unexpected errors',
  NO_COLOR: 'plain output without colours',
}
