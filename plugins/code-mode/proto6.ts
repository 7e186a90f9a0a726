import { runProgram } from './src/sandbox.js'
import { CallScheduler } from './src/scheduler.js'
const limits = { memoryBytes: 8 << 20, stackBytes: 256 << 10, cpuTimeMs: 300, timeoutMs: 10000, maxOutputBytes: 65536, maxCalls: 100 }
for (const code of ['console.log("start"); while (true) {}']) {
  const scheduler = new CallScheduler(async () => ({ ok: true, json: '1' }), () => true)
  const t = performance.now()
  try { console.log(await runProgram({ code, limits, toolNames: [], scheduler })) } catch (e: any) { console.log('ERR', e.message.slice(0, 300), e.stack) }
  console.log(performance.now() - t, 'ms')
}
