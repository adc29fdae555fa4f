import { DEFAULT_API_PATH, type UploadResult } from '../../protocol/wire.ts'
import type { UploadLimits } from '../file-checks.ts'
import { useApiInfo } from '../useApiInfo.ts'
import { type S3Dropzone, type UseS3DropzoneOptions, useDropzoneUploads } from '../useS3Dropzone.ts'

/**
 * What `<UploadDropzone>` and `<UploadButton>` take: every option of `useS3Dropzone` (presigned
 * by default, as everywhere; `strategy: 'token'` for token mode), where the limits come from, and
 * looks.
 */
export interface UploadComponentProps extends Omit<UseS3DropzoneOptions, 'limits'> {
  /**
   * The server's limits, checked before any request. `'server'` asks `GET {api}/info`
   * (no limits while it answers, or when it has no such route); `false` checks nothing.
   * @default 'server'
   */
  limits?: UploadLimits | 'server' | false
  /** Extra class names on the component's root (theming: set `--updraft-*` variables there). @default none */
  className?: string
  /** Force a colour scheme. @default the system's (`prefers-color-scheme`) */
  theme?: 'light' | 'dark'
  /** Each file stored, first try or a retry: what the app keeps (the key, the URL). @default none */
  onUploadComplete?: (result: UploadResult, file: File) => void
  /**
   * A finished row's note from what the server's `onUploadComplete` answered (`serverData`), e.g.
   * `(data) => \`Saved as #${data.id}\``; nothing shown when it returns undefined. @default none
   */
  describeServerData?: (serverData: unknown, file: File) => string | undefined
}

/** The hook behind both components: `useS3Dropzone` with limits from `/info`. */
export function useUploader(props: UploadComponentProps): { uploads: S3Dropzone; limits: UploadLimits | undefined } {
  const {
    limits: given = 'server',
    className: _className,
    theme: _theme,
    onUploadComplete,
    describeServerData: _describe,
    ...options
  } = props
  const info = useApiInfo(given === 'server' && (options.api ?? DEFAULT_API_PATH))
  const limits =
    given === 'server'
      ? info.state === 'ready'
        ? { maxFileSize: info.info.maxFileSize, allowedTypes: info.info.allowedTypes }
        : undefined
      : given || undefined
  const uploads = useDropzoneUploads({ ...options, limits }, onUploadComplete)
  return { uploads, limits }
}
