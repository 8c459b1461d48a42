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
