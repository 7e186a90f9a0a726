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

/** A spill file written piece by piece, as output arrives (see {@link SpillService.open}). */
export interface SpillWriter {
  /** The file's absolute path. */
  readonly path: string
  /** Appends bytes; resolves once they are written (await it to apply back-pressure). */
  write(chunk: Uint8Array): Promise<void>
  /** Closes the file; resolves with its path and size. */
  close(): Promise<SpillSaved>
}

/** The `spill` service: a private file store for output too large to show inline. Implemented by `@cordage/plugin-spill`. */
export interface SpillService {
  /** The absolute spill directory. */
  readonly dir: string
  /** Writes `text` to a new private file (0600, in the 0700 spill directory) and returns its path and size. */
  save(input: SpillInput): Promise<SpillSaved>
  /**
   * Opens a new private file (as `save` names and protects it) to write output into while it arrives, so
   * output larger than memory can be kept whole. Optional: implementations written before it lack it.
   */
  open?(input: Omit<SpillInput, 'text'>): Promise<SpillWriter>
}
