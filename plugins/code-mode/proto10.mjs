import { newQuickJSWASMModule } from 'quickjs-emscripten'
const mod = await newQuickJSWASMModule()
const rt = mod.newRuntime()
const vm = rt.newContext()
for (let k = 0; k < 6; k++) {
  const t = performance.now()
  const r = vm.evalCode('(() => { let s = 0; for (let i = 0; i < 1e6; i++) s += i; return s })()')
  console.log((performance.now() - t).toFixed(0), 'ms')
  ;(r.error ?? r.value).dispose()
}
