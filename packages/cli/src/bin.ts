#!/usr/bin/env node
import { main } from './main.js'

// Exit only after stdout drains; a piped consumer must see every line.
const code = await main(process.argv.slice(2))
process.exitCode = code
// Plugins that leave handles open after disposal must not keep the command alive.
setTimeout(() => process.exit(code), 200).unref()
