#!/usr/bin/env node
import { main } from './main.js'

let finished = false
// Node ends a process whose event loop empties while the command is still awaited with exit code 13
// and only a generic warning; say which command stopped and how to learn more.
process.once('exit', () => {
  if (!finished && process.exitCode === 13)
    process.stderr.write(
      `cordage ${process.argv.slice(2, 4).join(' ')}: stopped with nothing left to run before the command finished (UNSETTLED_EXIT, exit 13): a transport or plugin ended without notice\n`,
    )
})
// Exit only after stdout drains; a piped consumer must see every line.
const code = await main(process.argv.slice(2))
finished = true
process.exitCode = code
// Plugins that leave handles open after disposal must not keep the command alive.
setTimeout(() => process.exit(code), 200).unref()
