import { newQuickJSWASMModule } from 'quickjs-emscripten'
const mod = await newQuickJSWASMModule()
const rt = mod.newRuntime()
const vm = rt.newContext()
for (const code of ['let s = 0; for (let i = 0; i < 1e6; i++) s += i; s', 'let s = 0; for (let i = 0; i < 1e6; i++) s += i; s', 'const a = []; for (let i = 0; i < 100000; i++) a.push(1); a.length', 'const a = []; for (let i = 0; i < 100000; i++) a.push(1); a.length', 'const a = []; for (let i = 0; i < 100000; i++) a.push({}); a.length', 'const a = []; for (let i = 0; i < 100000; i++) a.push({}); a.length']) {
  const t = performance.now()
  const r = vm.evalCode(code)
  console.log(code.slice(0, 60), (performance.now() - t).toFixed(0), 'ms', r.error ? vm.dump(r.error).message : vm.dump(r.value))
  ;(r.error ?? r.value).dispose()
}
