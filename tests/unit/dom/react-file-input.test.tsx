import { act, cleanup, fireEvent, render, renderHook, screen } from '@testing-library/react'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { FileInput } from '../../../src/FileInput.tsx'
import { useFileDialog } from '../../../src/useFileDialog.tsx'
import { useS3Upload } from '../../../src/useS3Upload.ts'
import { fileInput } from '../../helpers/file-input.ts'

afterEach(cleanup)

const pick = (input: HTMLElement, files: File[]) => fireEvent.change(input, { target: { files } })
const a = new File(['a'], 'a.txt', { type: 'text/plain' })
const b = new File(['bb'], 'b.txt', { type: 'text/plain' })

describe('FileInput', () => {
  it('calls onChange with the picked File, and undefined when the pick was cancelled', () => {
    const onChange = vi.fn()
    render(<FileInput data-testid="input" onChange={onChange} />)
    pick(screen.getByTestId('input'), [a])
    expect(onChange).toHaveBeenLastCalledWith(a, expect.objectContaining({ type: 'change' }))
    pick(screen.getByTestId('input'), [])
    expect(onChange).toHaveBeenLastCalledWith(undefined, expect.anything())
  })

  it('with `multiple`, calls onChange with every picked File', () => {
    const onChange = vi.fn()
    render(<FileInput data-testid="input" multiple onChange={onChange} />)
    pick(screen.getByTestId('input'), [a, b])
    expect(onChange).toHaveBeenCalledWith([a, b], expect.anything())
  })

  it('passes accept, multiple, name, aria and other input props through; the type stays file', () => {
    render(<FileInput data-testid="input" accept="image/*" multiple name="photos" aria-label="Photos" disabled />)
    const input = screen.getByTestId('input') as HTMLInputElement
    expect(input.type).toBe('file')
    expect(input.accept).toBe('image/*')
    expect(input.multiple).toBe(true)
    expect(input.name).toBe('photos')
    expect(input.disabled).toBe(true)
    expect(input.getAttribute('aria-label')).toBe('Photos')
  })
})

describe("the hook's FileInput and openFileDialog", () => {
  it('renders a hidden file input, props passed through', () => {
    const { result } = renderHook(() => useS3Upload())
    const { FileInput: HookInput } = result.current
    render(<HookInput accept=".pdf" multiple onChange={() => {}} />)
    const input = fileInput()
    expect(input.type).toBe('file')
    expect(input.style.display).toBe('none')
    expect(input.accept).toBe('.pdf')
    expect(input.multiple).toBe(true)
  })

  it('openFileDialog clears the value first, then clicks, so the same file can be picked again', () => {
    const { result } = renderHook(() => useFileDialog())
    const { FileInput: HookInput } = result.current
    render(<HookInput />)
    const input = fileInput()
    // jsdom refuses a non-empty value on a file input: watch the writes instead.
    const writes: string[] = []
    const events: string[] = []
    Object.defineProperty(input, 'value', {
      configurable: true,
      get: () => '',
      set: (v: string) => void writes.push(v),
    })
    input.addEventListener('click', (event) => {
      events.push(`click after ${writes.length} clear(s)`)
      event.preventDefault()
    })
    act(() => result.current.openFileDialog())
    expect(writes).toEqual([''])
    expect(events).toEqual(['click after 1 clear(s)'])
  })

  it('openFileDialog before the input is rendered does nothing', () => {
    const { result } = renderHook(() => useFileDialog())
    expect(() => result.current.openFileDialog()).not.toThrow()
  })

  it('getInputProps lets a caller render the input itself, its props winning over the defaults', () => {
    const { result } = renderHook(() => useFileDialog())
    render(<input type="file" {...result.current.getInputProps({ 'data-testid': 'mine', style: { opacity: 0 } })} />)
    const input = screen.getByTestId('mine') as HTMLInputElement
    expect(input.style.opacity).toBe('0')
    expect(result.current.getInputProps().ref.current).toBe(input)
  })
})
