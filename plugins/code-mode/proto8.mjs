import { newQuickJSWASMModule } from 'quickjs-emscripten'
const mod = await newQuickJSWASMModule()
for (const [mem, code] of [[8<<20, 'const h = []; while (true) h.push("x".repeat(1 << 20) + h.length)'], [8<<20, 'const h = []; while (true) h.push(new Uint8Array(1 << 20))'], [32<<20, 'const h = []; while (true) h.push("x".repeat(1 << 20) + h.length)'], [8<<20, 'const h = []; while (true) h.push([h.length, h.length])']]) {
  const rt = mod.newRuntime(); rt.setMemoryLimit(mem)
  let ticks = 0
  rt.setInterruptHandler(() => { ticks++; return false })
  const vm = rt.newContext()
  const t = performance.now()
  const r = vm.evalCode(code)
  console.log(mem >> 20, code.slice(0, 60), (performance.now() - t).toFixed(0), 'ms', 'ticks', ticks, r.error ? vm.dump(r.error).message : vm.dump(r.value))
  ;(r.error ?? r.value).dispose()
  vm.dispose(); rt.dispose()
}
