import { useId, type ReactNode } from 'react';

interface StepCardProps {
  number: number;
  title: string;
  icon: ReactNode;
  /** This step's choice is made. */
  done: boolean;
  disabled?: boolean;
  children: ReactNode;
}

/** One of the three steps, as a labelled region. */
export function StepCard({ number, title, icon, done, disabled, children }: StepCardProps) {
  const headingId = useId();
  return (
    <section className={`step ${done ? 'done' : ''} ${disabled ? 'disabled' : ''}`} aria-labelledby={headingId}>
      <div className="step-head">
        <span className="step-number" aria-hidden="true">
          {number}
        </span>
        {icon}
      </div>
      <h2 id={headingId}>
        <span className="visually-hidden">Step {number}: </span>
        {title}
      </h2>
      <div className="step-content">{children}</div>
    </section>
  );
}
