// Job output is a bounded text log addressed by absolute character offsets (a head kept for good, then a
// rolling tail): the shared head/tail window of @cordage/process, under the name the job table uses.
export { TextLog as OutputBuffer, type TextRead as BufferRead } from '@cordage/process'
