import { Context } from 'cordis'
import { ToolRegistry } from '@cordage/registry'
import * as basicTools from './tools.js'

// A first Cordage program: load the registry and a tool plugin, call tools as a program would
// (typed, frozen values) and show the content a model would read.
const ctx = new Context()
await ctx.plugin(ToolRegistry)
const fiber = await ctx.plugin(basicTools)
const tools = ctx.get('tools')!

console.log(
  'tools:',
  tools
    .list()
    .map((tool) => tool.name)
    .join(', '),
)

const calls = [
  { name: 'word_count', arguments: { text: 'Every tool returns one typed JSON value\nand renders it for the model.' } },
  { name: 'sort_numbers', arguments: { numbers: [3, 1, 2] } },
  { name: 'sort_numbers', arguments: { numbers: [3, 'one'] } },
  { name: 'translate', arguments: {} },
]
let failures = 0
for (const call of calls) {
  const result = await tools.execute(call)
  const shown = result.content.map((block) => (block.type === 'text' ? block.text : `[${block.type}]`)).join('\n')
  console.log(`\n> ${call.name} ${JSON.stringify(call.arguments)}`)
  console.log(`  model sees: ${shown.replace(/\n/g, '\n             ')}`)
  if (result.isError) {
    failures++
    console.log(`  error code: ${result.error.info?.code}`)
  } else {
    console.log(`  program gets: ${JSON.stringify(result.value)} (frozen: ${Object.isFrozen(result.value)})`)
  }
}

await fiber.dispose()
console.log(`\nafter unloading the plugin: ${tools.list().length} tools registered`)
if (failures !== 2) {
  console.error(`expected exactly 2 failed calls, got ${failures}`)
  process.exit(1)
}
