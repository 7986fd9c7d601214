import { useState } from 'react';

/**
 * A secret made just now (an API key, a personal access token, a grant), shown
 * this once with a copy button. It lives in the state of the page that made it:
 * "Done, hide it" or leaving the page drops it, and the server cannot show it again.
 */
export function ShownOnce({
  id,
  title,
  label,
  what,
  value,
  onHide,
}: {
  /** The field's id (its heading is `${id}-heading`). */
  id: string;
  title: string;
  label: string;
  /** What it is, in the copy button's name: "Copy key". */
  what: string;
  value: string;
  onHide: () => void;
}) {
  const [copied, setCopied] = useState<string>();
  const copy = () => {
    navigator.clipboard.writeText(value).then(
      () => setCopied('Copied to the clipboard.'),
      () => setCopied(`Copying failed: select the ${what} and copy it by hand.`),
    );
  };
  return (
    <div className="secret" role="region" aria-labelledby={`${id}-heading`}>
      <h3 id={`${id}-heading`}>{title}</h3>
      <p>Copy it now: it is shown this once and cannot be shown again.</p>
      <label htmlFor={id}>{label}</label>
      <input id={id} readOnly value={value} spellCheck={false} />
      <div className="actions">
        <button type="button" onClick={copy}>
          Copy {what}
        </button>
        <button type="button" onClick={onHide}>
          Done, hide it
        </button>
      </div>
      <p role="status">{copied ?? ''}</p>
    </div>
  );
}
