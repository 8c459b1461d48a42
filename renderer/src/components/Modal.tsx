import { useEffect, useId, useRef, type ReactNode } from 'react';

interface ModalProps {
  title: string;
  /** Escape, the close button and the backdrop all call this: closing is always "cancel". */
  onClose: () => void;
  children: ReactNode;
  footer: ReactNode;
  className?: string;
}

/**
 * A modal on the native <dialog>: the browser traps focus inside, restores it afterwards, closes on
 * Escape and tells screen readers it is modal.
 */
export function Modal({ title, onClose, children, footer, className }: ModalProps) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const dialog = ref.current;
    if (dialog !== null && !dialog.open) dialog.showModal();
    return () => dialog?.close();
  }, []);
  return (
    <dialog
      ref={ref}
      className={`modal ${className ?? ''}`}
      aria-labelledby={titleId}
      onCancel={(event) => {
        event.preventDefault();
        onClose();
      }}
      onClick={(event) => {
        // A click on the backdrop lands on the <dialog> element itself.
        if (event.target === event.currentTarget) onClose();
      }}
    >
      <div className="modal-body">
        <h2 id={titleId}>{title}</h2>
        {children}
      </div>
      <div className="modal-footer">{footer}</div>
    </dialog>
  );
}

interface CancelOkProps {
  onCancel: () => void;
  /** The action's words, on the button that does it. */
  ok: ReactNode;
  onOk: () => void;
  /** 'primary', 'danger' or 'primary danger': how loudly the button says what it does. */
  kind?: string;
  /** The action is not possible yet (or is under way). */
  disabled?: boolean;
  /** Cancel too is held while the action is under way. */
  cancelDisabled?: boolean;
  /** Cancel has the focus, where the action destroys data. */
  focusCancel?: boolean;
  /** Buttons between the two. */
  children?: ReactNode;
}

/** A dialog's footer: Cancel, then the action. */
export function CancelOk({
  onCancel,
  ok,
  onOk,
  kind = 'primary',
  disabled,
  cancelDisabled,
  focusCancel,
  children,
}: CancelOkProps) {
  return (
    <>
      <button type="button" className="button" onClick={onCancel} disabled={cancelDisabled} autoFocus={focusCancel}>
        Cancel
      </button>
      {children}
      <button type="button" className={`button ${kind}`} onClick={onOk} disabled={disabled}>
        {ok}
      </button>
    </>
  );
}
