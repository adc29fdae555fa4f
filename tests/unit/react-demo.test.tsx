// @vitest-environment jsdom
import { act, cleanup, fireEvent, render, screen, within } from '@testing-library/react'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { EndpointError } from '../../engine/errors.ts'
import { FILE_INPUT_TEST_ID } from '../../src/useFileDialog.tsx'
import { App } from '../../demo/page/App.tsx'
import { stubUploader } from '../helpers/stub-uploader.ts'

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


const pick = (files: File[]) =>
  act(() => void fireEvent.change(screen.getByTestId(FILE_INPUT_TEST_ID), { target: { files } }))
const tokenRadio = () => screen.getByRole('radio', { name: /temporary credentials/i }) as HTMLInputElement
const presignedRadio = () => screen.getByRole('radio', { name: /presigned/i }) as HTMLInputElement

describe('demo page', () => {
  it('asks {endpoint}/info; token unavailable: the option is disabled and says why', async () => {
    const fetch = serveInfo({ token: false, tokenUnavailableReason: 'No STS configured for s3rver', presigned: true, store: 'embedded s3rver' })
    render(<App uploader={stubUploader().uploader} />)
    expect(await screen.findByText(/No STS configured for s3rver/)).toBeTruthy()
    expect(fetch).toHaveBeenCalledWith('/api/s3-upload/info', expect.anything())
    expect(tokenRadio().disabled).toBe(true)
    expect(tokenRadio().getAttribute('aria-describedby')).toBe('mode-token-note')
    expect(presignedRadio().checked).toBe(true)
    expect(screen.getByText('embedded s3rver')).toBeTruthy()
  })

  it('token available: switching to it makes the next uploads use token mode', async () => {
    serveInfo({ token: true, presigned: true, store: 'RGW' })
    const { uploader, calls } = stubUploader()
    render(<App uploader={uploader} />)
    await screen.findByText('RGW')
    expect(tokenRadio().disabled).toBe(false)
    act(() => void fireEvent.click(tokenRadio()))
    pick([new File(['x'], 'a.txt')])
    expect(calls[0]!.options.strategy).toBe('token')
  })

  it('no /info route: both modes stay offered, with a note', async () => {
    serveInfo(404)
    render(<App uploader={stubUploader().uploader} />)
    expect(await screen.findByText(/did not say whether it can issue tokens/)).toBeTruthy()
    expect(tokenRadio().disabled).toBe(false)
  })

  it('one row per picked file, with an accessible progress bar, bytes, abort, link and error', async () => {
    serveInfo({ token: false, presigned: true, store: 's3rver' })
    const { uploader, calls } = stubUploader()
    render(<App uploader={uploader} />)
    pick([new File([new Uint8Array(2048)], 'one.bin'), new File(['x'], 'two.txt'), new File(['y'], 'three.txt')])
    expect(calls.map((c) => c.options.strategy)).toEqual(['presigned', 'presigned', 'presigned'])

    const rows = () => screen.getAllByTestId('upload-row')
    expect(rows()).toHaveLength(3)
    const bar = within(rows()[0]!).getByRole('progressbar', { name: 'Upload of one.bin' })
    expect([bar.getAttribute('aria-valuemin'), bar.getAttribute('aria-valuemax'), bar.getAttribute('aria-valuenow')]).toEqual(['0', '100', '0'])

    act(() => calls[0]!.options.onProgress!({ loaded: 1024, total: 2048 }))
    expect(bar.getAttribute('aria-valuenow')).toBe('50')
    expect(rows()[0]!.textContent).toContain('1.0 KiB of 2.0 KiB sent')

    await act(async () => calls[0]!.resolve({ url: 'http://127.0.0.1:9000/b/one.bin', bucket: 'b', key: 'one.bin', etag: 'e' }))
    expect(rows()[0]!.dataset.status).toBe('done')
    expect(within(rows()[0]!).getByRole('link').getAttribute('href')).toBe('http://127.0.0.1:9000/b/one.bin')
    expect(within(rows()[0]!).queryByRole('button', { name: /abort/i })).toBeNull()

    await act(async () => calls[1]!.reject(new EndpointError('File type text/plain is not allowed', 400)))
    expect(rows()[1]!.dataset.status).toBe('error')
    expect(rows()[1]!.textContent).toContain('File type text/plain is not allowed')

    await act(async () => void fireEvent.click(within(rows()[2]!).getByRole('button', { name: 'Abort upload of three.txt' })))
    expect(rows()[2]!.dataset.status).toBe('aborted')
    expect(rows()[2]!.textContent).toContain('Upload aborted')
    expect(screen.getByText('0 running · 1 done · 2 failed or aborted')).toBeTruthy()

    act(() => void fireEvent.click(screen.getByRole('button', { name: 'Clear list' })))
    expect(screen.queryAllByTestId('upload-row')).toHaveLength(0)
  })

  it('files dropped anywhere on the page are uploaded', async () => {
    serveInfo({ token: false, presigned: true, store: 's3rver' })
    const { uploader, calls } = stubUploader()
    render(<App uploader={uploader} />)
    const files = [new File(['a'], 'dropped-1.txt'), new File(['b'], 'dropped-2.txt')]
    const dataTransfer = { types: ['Files'], files, dropEffect: 'none' }
    act(() => void fireEvent.dragEnter(window, { dataTransfer }))
    expect(screen.getByText('Drop to upload')).toBeTruthy()
    act(() => void fireEvent.drop(window, { dataTransfer }))
    expect(calls.map((c) => c.file.name)).toEqual(['dropped-1.txt', 'dropped-2.txt'])
    expect(screen.queryByText('Drop to upload')).toBeNull()
    expect(screen.getAllByTestId('upload-row')).toHaveLength(2)
  })

  it('"Choose files…" opens the file dialog through the hidden input', async () => {
    serveInfo({ token: false, presigned: true, store: 's3rver' })
    render(<App uploader={stubUploader().uploader} />)
    const click = vi.fn()
    screen.getByTestId(FILE_INPUT_TEST_ID).addEventListener('click', (e) => (click(), e.preventDefault()))
    act(() => void fireEvent.click(screen.getByRole('button', { name: 'Choose files…' })))
    expect(click).toHaveBeenCalledOnce()
  })
})
