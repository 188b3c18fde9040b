"""PaperTrail's pipeline: sources → store → enrich → digest → site. The public surface is `cli`."""
