-- Run once by the postgres image when its data volume is new: sandbox needs a database of its own.
CREATE DATABASE kassa_sandbox OWNER kassa;
