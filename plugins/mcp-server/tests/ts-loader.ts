// The root vitest config resolves dependencies with the `source` export condition, which sends the SDK's
// `eventsource-parser/stream` import to a TypeScript file Node cannot load; register tsx so it can.
// Imported first by every test file that reaches the SDK's HTTP client.
import { register } from 'tsx/esm/api'

register()
