import type { Strategy } from '../../protocol/wire.ts'
import type { ApiInfoState } from '../../src/index.ts'

interface ModeSwitchProps {
  mode: Strategy
  onChange(mode: Strategy): void
  server: ApiInfoState
}

/** Real radio buttons in a fieldset: arrow keys move between them, the legend names the group. */
export function ModeSwitch({ mode, onChange, server }: ModeSwitchProps) {
  const tokenAvailable = server.state === 'unknown' || (server.state === 'ready' && server.info.token)
  const tokenNote =
    server.state === 'loading'
      ? 'Checking whether the server can issue tokens…'
      : server.state === 'ready' && !server.info.token
        ? // Information, not an error (muted, no "Unavailable"): on the embedded store, a first visit, nothing is wrong.
          `Not on this server. ${sentence(server.info.tokenUnavailableReason ?? 'It cannot issue temporary credentials')}`
        : server.state === 'unknown'
          ? `The server did not say whether it can issue tokens (${server.reason}); if it cannot, uploads will fail with its message.`
          : 'The server issues short-lived STS credentials scoped to one key; the page signs its own requests.'

  return (
    <fieldset className="mode-switch">
      <legend>Upload mode</legend>
      <label className="mode-option">
        <input
          type="radio"
          name="mode"
          value="presigned"
          checked={mode === 'presigned'}
          onChange={() => onChange('presigned')}
          aria-describedby="mode-presigned-note"
        />
        <span className="mode-title">Presigned URLs</span>
        <span id="mode-presigned-note" className="mode-note">
          The server signs every request to storage; the page never holds a key.
        </span>
      </label>
      <label className={`mode-option${tokenAvailable ? '' : ' is-disabled'}`}>
        <input
          type="radio"
          name="mode"
          value="token"
          checked={mode === 'token'}
          disabled={!tokenAvailable}
          onChange={() => onChange('token')}
          aria-describedby="mode-token-note"
        />
        <span className="mode-title">Temporary credentials (token)</span>
        <span id="mode-token-note" className="mode-note">
          {settingsKeptWhole(tokenNote)}
        </span>
      </label>
    </fieldset>
  )
}

/**
 * A setting to paste (`S3_UPLOAD_STS_MODE=assume-role`) is never broken across lines: a narrow card
 * broke it at its hyphen, as "assume-" and "role".
 */
const settingsKeptWhole = (text: string) =>
  text.split(/([A-Z][A-Z0-9_]*=[^\s,;)]*[^\s.,;:)])/).map((piece, index) =>
    index % 2 === 1 ? (
      <code key={piece} className="setting">
        {piece}
      </code>
    ) : (
      piece
    ),
  )

/** A reason as a sentence: capital first, full stop last. */
const sentence = (text: string) => `${text[0]!.toUpperCase()}${text.slice(1)}${/[.!?]$/.test(text) ? '' : '.'}`
