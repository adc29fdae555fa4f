// The demo page (demo/page) with a stubbed engine: one /info call decides token mode and the
// limits the dropzone checks. The page in real Chromium: tests/demo-browser.test.ts.
import { act, cleanup, fireEvent, render, screen, within } from '@testing-library/react'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { App } from '../../../demo/page/App.tsx'
import { fileInput } from '../../helpers/file-input.ts'
import { stubUploader } from '../../helpers/stub-uploader.ts'

afterEach(() => {
  cleanup()
  vi.unstubAllGlobals()
})

function serveInfo(info: object | number) {
  const fetch = vi.fn(async () =>
    typeof info === 'number' ? new Response('Not Found', { status: info }) : Response.json(info),
  )
  vi.stubGlobal('fetch', fetch)
  return fetch
}

const pick = (files: File[]) => act(() => void fireEvent.change(fileInput(), { target: { files } }))
const tokenRadio = () => screen.getByRole('radio', { name: /temporary credentials/i }) as HTMLInputElement
const presignedRadio = () => screen.getByRole('radio', { name: /presigned/i }) as HTMLInputElement

describe('demo page', () => {
  it('asks {api}/info once; token unavailable: the option is disabled and says why', async () => {
    const fetch = serveInfo({
      token: false,
      tokenUnavailableReason: 'No STS configured for s3rver',
      presigned: true,
      store: 'embedded s3rver',
    })
    render(<App />, { wrapper: stubUploader().wrapper })
    expect((await screen.findByText(/No STS configured for s3rver/)).textContent).toBe(
      'Not on this server. No STS configured for s3rver.',
    )
    expect(fetch).toHaveBeenCalledTimes(1)
    expect(fetch).toHaveBeenCalledWith('/api/s3-upload/info', expect.anything())
    expect(tokenRadio().disabled).toBe(true)
    expect(tokenRadio().getAttribute('aria-describedby')).toBe('mode-token-note')
    expect(presignedRadio().checked).toBe(true)
    expect(screen.getByText('embedded s3rver')).toBeTruthy()
    expect(screen.getByText(/Any file/)).toBeTruthy()
  })

  it('keeps a setting to paste whole on one line (a narrow card broke "assume-" / "role")', async () => {
    serveInfo({
      token: false,
      tokenUnavailableReason:
        'GetFederationToken exists only on AWS STS; for this store set S3_UPLOAD_STS_MODE=assume-role and S3_UPLOAD_ROLE_ARN.',
      presigned: true,
      store: 'RGW',
    })
    render(<App />, { wrapper: stubUploader().wrapper })
    const note = await screen.findByText(/GetFederationToken/)
    expect(note.textContent).toBe(
      'Not on this server. GetFederationToken exists only on AWS STS; for this store set S3_UPLOAD_STS_MODE=assume-role and S3_UPLOAD_ROLE_ARN.',
    )
    expect([...note.querySelectorAll('code.setting')].map((code) => code.textContent)).toEqual([
      'S3_UPLOAD_STS_MODE=assume-role',
    ])
  })

  it('token available: switching to it makes the next uploads use token mode', async () => {
    serveInfo({ token: true, presigned: true, store: 'RGW' })
    const { wrapper, calls } = stubUploader()
    render(<App />, { wrapper })
    await screen.findByText('RGW')
    expect(tokenRadio().disabled).toBe(false)
    act(() => void fireEvent.click(tokenRadio()))
    pick([new File(['x'], 'a.txt', { type: 'text/plain' })])
    expect(calls[0]!.options.strategy).toBe('token')
  })

  it('no /info route: both modes stay offered, with a note, and nothing is checked in the page', async () => {
    serveInfo(404)
    const { calls } = (() => {
      const stub = stubUploader()
      render(<App />, { wrapper: stub.wrapper })
      return stub
    })()
    expect(await screen.findByText(/did not say whether it can issue tokens/)).toBeTruthy()
    expect(tokenRadio().disabled).toBe(false)
    pick([new File([new Uint8Array(10)], 'any.bin')])
    expect(calls).toHaveLength(1)
  })

  it("the server's limits from /info: shown, the picker filtered, and a file breaking them refused without a request", async () => {
    serveInfo({
      token: false,
      presigned: true,
      store: 's3rver',
      maxFileSize: 31457280,
      allowedTypes: ['image/*', 'application/pdf'],
    })
    const { wrapper, calls } = stubUploader()
    render(<App />, { wrapper })
    await screen.findAllByText('Images and PDFs, up to 30 MiB each')
    expect(fileInput().getAttribute('accept')).toBe('image/*,application/pdf')
    const big = new File([], 'talk.pdf', { type: 'application/pdf' })
    Object.defineProperty(big, 'size', { value: 62914560 })
    pick([
      big,
      new File(['x'], 'notes.txt', { type: 'text/plain' }),
      new File(['y'], 'photo.png', { type: 'image/png' }),
    ])
    expect(calls.map((c) => c.file.name)).toEqual(['photo.png'])
    const rows = screen.getAllByTestId('upload-row')
    expect(within(rows[0]!).getByText('60 MiB is over the 30 MiB limit')).toBeTruthy()
    expect(within(rows[1]!).getByText("Text files aren't accepted here — only images and PDFs")).toBeTruthy()
  })

  it('puts the dropzone before the settings, so a phone shows it first', async () => {
    serveInfo({ token: false, presigned: true, store: 's3rver' })
    render(<App />, { wrapper: stubUploader().wrapper })
    await screen.findByText('s3rver')
    const zone = screen.getByRole('button', { name: 'Choose files' })
    const settings = screen.getByRole('group', { name: 'Upload mode' })
    expect(zone.compareDocumentPosition(settings) & Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy()
  })
})
