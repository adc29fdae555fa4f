import { UploadError } from '../engine/core/errors.ts'
import { overLimit } from '../protocol/bytes.ts'
import { essenceOf, type LimitRefusal, limitRefusal, type UploadLimits } from '../protocol/file-limits.ts'

export type { LimitRefusal, UploadLimits }

/**
 * A file the page refused before any request left it, by the upload API's own limits (its
 * `maxFileSize` and `allowedTypes`, as `GET {api}/info` reports them). `refusal` holds the
 * reason with its figures; src/messages.ts turns it into words for people.
 */
export class FileRefusedError extends UploadError {
  override name = 'FileRefusedError'
  /** The refused file. */
  readonly file: File
  /** Why, with the figures: `too-large` (`size`, `maxFileSize`) or `type` (`essence`, `allowedTypes`, `activeContent`). */
  readonly refusal: LimitRefusal

  constructor(file: File, refusal: LimitRefusal) {
    super(
      refusal.reason === 'too-large'
        ? `${file.name}: ${overLimit(refusal.size, refusal.maxFileSize)} (the upload API's maxFileSize); nothing was sent`
        : `${file.name} is ${refusal.essence}, which the upload API does not accept` +
            (refusal.allowedTypes ? ` (allowedTypes: ${refusal.allowedTypes.join(', ')})` : ' (active content)') +
            '; nothing was sent',
    )
    this.file = file
    this.refusal = refusal
  }
}

/**
 * The upload API's rule (protocol/file-limits.ts) applied in the page: the refusal the upload API
 * would answer with 413 or 415, or undefined. A type the upload API could not even parse is left
 * for the upload API to explain. Returns the error rather than throwing it.
 *
 * @example
 * ```ts
 * const refused = checkFile(file, { maxFileSize: 30 * 1024 * 1024, allowedTypes: ['image/*'] })
 * if (refused) alert(errorMessage(refused)) // "60 MiB is over the 30 MiB limit"
 * ```
 */
export function checkFile(file: File, limits: UploadLimits): FileRefusedError | undefined {
  const essence = essenceOf(file.type)
  const refusal = essence === undefined ? undefined : limitRefusal(limits, essence, file.size)
  return refusal && new FileRefusedError(file, refusal)
}

/** The `accept` attribute of a file input for `allowedTypes`: the picker then offers only those. */
export const acceptOf = (allowedTypes: readonly string[] | undefined): string | undefined => allowedTypes?.join(',')
