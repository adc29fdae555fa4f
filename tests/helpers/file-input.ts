/**
 * The hooks' and components' hidden file input, found as a user's test would: it carries no test
 * id (test ids are no part of the public types). The dropzone's folder input is the one with
 * `webkitdirectory`.
 */
export const FILE_INPUT = 'input[type="file"]:not([webkitdirectory])'

/** The one file input in the jsdom document (jsdom tests render one hook or component at a time). */
export function fileInput(): HTMLInputElement {
  const inputs = document.querySelectorAll<HTMLInputElement>(FILE_INPUT)
  if (inputs.length !== 1) throw new Error(`expected one file input, found ${inputs.length}`)
  return inputs[0]!
}
