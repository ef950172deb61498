// The entry of teacher.html: the teacher page (./teacher/tp-teacher.ts) — compose an
// assignment link for a class, read the students' completion codes into a class table, print
// a worksheet.

import './teacher/tp-teacher';
