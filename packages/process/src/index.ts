export { ProcessTree, TREE_VARIABLE, newTreeToken, type TerminateOptions } from './tree.js'
export { hasProc, readProcess, type ProcessInfo } from './proc.js'
export { HeadTail, ByteCapture, TextLog, type TextRead } from './capture.js'
export { utf8Head, utf8Tail } from './utf8.js'
