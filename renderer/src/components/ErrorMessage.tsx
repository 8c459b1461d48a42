/** Why something did not work, announced to screen readers as it appears; nothing while there is no error. */
export function ErrorMessage({ error }: { error: string | null }) {
  if (error === null) return null;
  return (
    <p className="message error" role="alert">
      {error}
    </p>
  );
}
