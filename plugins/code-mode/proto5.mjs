import { newQuickJSWASMModule } from 'quickjs-emscripten'
const stack = +process.argv[2] << 10
const mod = await newQuickJSWASMModule()
for (const [label, code] of [['sync throw', 'function f(){return f()} try { f() } catch (e) { 1 }'], ['async', '(async () => { function f(){return f()} return f() })().catch(() => 1)'], ['async uncaught', '(async () => { function f(){return f()} return f() })()'], ['sync no catch', 'function f(){return f()} f()'], ['deep json', 'let a = []; for (let i = 0; i < 100000; i++) a = [a]; JSON.stringify(a)']]) {
  const rt = mod.newRuntime(); rt.setMaxStackSize(stack)
  const vm = rt.newContext()
  const r = vm.evalCode(code)
  if (r.error) { console.log(label, 'error', vm.dump(r.error).message); r.error.dispose() } else { const s = vm.getPromiseState(r.value); if (s.type === 'rejected') { console.log('rejected', vm.dump(s.error).message); s.error.dispose() } else if (!s.notAPromise) s.value?.dispose(); r.value.dispose() }
  rt.executePendingJobs()
  try { vm.dispose(); rt.dispose(); console.log(label, 'ok') } catch (e) { console.log(label, 'dispose failed', e.message.slice(0, 100)) ; break }
}
