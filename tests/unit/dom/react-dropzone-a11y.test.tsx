// useDropzone's root as react-dropzone's getRootProps promises it: a button in the tab order that
// Space and Enter open, and drag state from the set of entered elements, which Firefox's doubled
// dragenter on one element cannot throw off (a depth counter could). Real browsers: dropzone-browser.test.ts.
import { act, cleanup, fireEvent, render, screen } from '@testing-library/react'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { type DropzoneOptions, useDropzone } from '../../../src/useDropzone.ts'

afterEach(cleanup)

function Zone({ rootProps = {}, ...options }: Partial<DropzoneOptions> & { rootProps?: Record<string, unknown> }) {
  const { getRootProps, getInputProps, isDragActive } = useDropzone({ onFiles: () => {}, ...options })
  return (
    <div {...getRootProps({ 'data-testid': 'zone', 'data-active': String(isDragActive), ...rootProps })}>
      <span data-testid="child">Drop files here</span>
      <button type="button">Inner</button>
      <input data-testid="input" {...getInputProps()} />
    </div>
  )
}

const withFiles = { dataTransfer: { types: ['Files'], files: [], items: [] } }

describe('the root of useDropzone', () => {
  it('is a button in the tab order', () => {
    render(<Zone />)
    const zone = screen.getByTestId('zone')
    expect(zone.getAttribute('role')).toBe('button')
    expect(zone.tabIndex).toBe(0)
    expect(screen.getByRole('button', { name: /Drop files here/ })).toBe(zone)
  })

  it('Space and Enter on the focused root open the file dialog; on a button inside it they do not', () => {
    render(<Zone />)
    const click = vi.spyOn(screen.getByTestId('input') as HTMLInputElement, 'click').mockImplementation(() => {})
    const zone = screen.getByTestId('zone')
    zone.focus()
    fireEvent.keyDown(zone, { key: 'Enter' })
    fireEvent.keyDown(zone, { key: ' ' })
    expect(click).toHaveBeenCalledTimes(2)
    fireEvent.keyDown(zone, { key: 'a' })
    fireEvent.keyDown(screen.getByText('Inner'), { key: 'Enter' })
    expect(click).toHaveBeenCalledTimes(2)
  })

  it('a role or tabIndex passed in wins (the ready-made zones: a group, out of the tab order, as their buttons are in it)', () => {
    render(<Zone rootProps={{ role: 'group', tabIndex: -1 }} />)
    expect(screen.getByTestId('zone').getAttribute('role')).toBe('group')
    expect(screen.getByTestId('zone').tabIndex).toBe(-1)
    cleanup()
    render(<Zone rootProps={{ role: 'group', tabIndex: undefined }} />)
    expect(screen.getByTestId('zone').hasAttribute('tabindex')).toBe(false)
  })

  it("stays active through Firefox's doubled dragenter on one element, and ends when every entered element is left", () => {
    render(<Zone />)
    const zone = screen.getByTestId('zone')
    const child = screen.getByTestId('child')
    act(() => {
      fireEvent.dragEnter(zone, withFiles)
      fireEvent.dragEnter(child, withFiles)
      fireEvent.dragEnter(child, withFiles) // Firefox: the same element twice
    })
    expect(zone.dataset.active).toBe('true')
    act(() => void fireEvent.dragLeave(child, withFiles))
    expect(zone.dataset.active).toBe('true') // still over the root
    act(() => void fireEvent.dragLeave(zone, withFiles))
    expect(zone.dataset.active).toBe('false') // a counter would sit at 1 here and stay active
  })
})
