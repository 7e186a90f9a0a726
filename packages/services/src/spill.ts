/** What a caller spills: the text plus the names used to build a readable file name. */
export interface SpillInput {
  toolName: string
  callId: string
  /** A hint such as `output` or `paths.txt`; sanitised, and `.txt` is added when it has no extension. */
  suggestedName?: string
  text: string
}

/** Where the text went: an absolute path and its UTF-8 size. */
export interface SpillSaved {
  path: string
  bytes: number
}

/** The `spill` service: a private file store for output too large to show inline. Implemented by `@cordage/plugin-spill`. */
export interface SpillService {
  /** The absolute spill directory. */
  readonly dir: string
  /** Writes `text` to a new private file (0600, in the 0700 spill directory) and returns its path and size. */
  save(input: SpillInput): Promise<SpillSaved>
}
