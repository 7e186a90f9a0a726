import Schema from 'schemastery'
import { defineTool, type ContentBlock } from '@cordage/core'
import { createTestContext } from '@cordage/testing'
import type { Context } from 'cordis'
import * as Policy from '../src/index.js'

/** `account {}` returns a user with a secret token and items; its content is the value as JSON. */
export const accountTool = defineTool({
  name: 'account',
  description: 'Shows the account.',
  parameters: Schema.object({}),
  output: {
    schema: Schema.object({
      user: Schema.string().required(),
      token: Schema.string(),
      items: Schema.array(Schema.object({ name: Schema.string().required(), secret: Schema.string() })).required(),
    }),
    render: (_args, value) => [{ type: 'text', text: JSON.stringify(value) }] as ContentBlock[],
  },
  execute: () => ({
    user: 'ada',
    token: 'tok-SECRET',
    items: [
      { name: 'a', secret: 's1' },
      { name: 'b', secret: 's2' },
    ],
  }),
})

/** `run_command { command, path? }` echoes what it would run. */
export const commandTool = defineTool({
  name: 'run_command',
  description: 'Pretends to run a command.',
  parameters: Schema.object({ command: Schema.string().required(), path: Schema.string(), force: Schema.boolean() }),
  output: {
    schema: Schema.object({ ran: Schema.string().required() }),
    render: (_args, value) => [{ type: 'text', text: `ran ${value.ran}` }] as ContentBlock[],
  },
  execute: (args) => ({ ran: args.command }),
})

export const toolsPlugin = {
  name: 'policy-test-tools',
  inject: ['tools'],
  apply(ctx: Context) {
    ctx.tools.register(accountTool)
    ctx.tools.register(commandTool)
  },
}

export async function setup(rules: Policy.RuleConfig[]) {
  const ctx = await createTestContext({ print: false })
  await ctx.plugin(toolsPlugin)
  const fiber = await ctx.plugin(Policy, { rules })
  return { ctx, fiber }
}

export const textOf = (content: readonly ContentBlock[]) => content.map((block) => (block.type === 'text' ? block.text : '')).join('\n')
